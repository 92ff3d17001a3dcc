from enum import StrEnum

class ProcessingGuarantee(StrEnum):
    AT_LEAST_ONCE = "at_least_once"
    EXACTLY_ONCE = "exactly_once"
    NONE = "none"

    def __str__(self) -> str:
        return str(self.value)
