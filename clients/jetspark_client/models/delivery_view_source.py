from enum import StrEnum

class DeliveryViewSource(StrEnum):
    JOB = "job"
    SERVER = "server"

    def __str__(self) -> str:
        return str(self.value)
