from enum import StrEnum

class PartitionsGetKeyType(StrEnum):
    INT = "int"
    JSON = "json"
    STRING = "string"

    def __str__(self) -> str:
        return str(self.value)
