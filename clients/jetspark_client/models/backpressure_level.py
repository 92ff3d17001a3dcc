from enum import StrEnum

class BackpressureLevel(StrEnum):
    HIGH = "high"
    LOW = "low"
    OK = "ok"

    def __str__(self) -> str:
        return str(self.value)
