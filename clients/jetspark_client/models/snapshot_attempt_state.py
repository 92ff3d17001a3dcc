from enum import StrEnum

class SnapshotAttemptState(StrEnum):
    ABANDONED = "abandoned"
    COMMITTED = "committed"
    FAILED = "failed"
    IN_PROGRESS = "in_progress"

    def __str__(self) -> str:
        return str(self.value)
