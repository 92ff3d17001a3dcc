from enum import StrEnum

class JobStatus(StrEnum):
    CANCELLED = "CANCELLED"
    COMPLETED = "COMPLETED"
    COMPLETING = "COMPLETING"
    FAILED = "FAILED"
    QUEUED = "QUEUED"
    RESTARTING = "RESTARTING"
    RUNNING = "RUNNING"
    STARTING = "STARTING"
    SUSPENDED = "SUSPENDED"

    def __str__(self) -> str:
        return str(self.value)
