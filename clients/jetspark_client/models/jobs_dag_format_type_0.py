from enum import StrEnum

class JobsDagFormatType0(StrEnum):
    JSON = "json"
    SVG = "svg"

    def __str__(self) -> str:
        return str(self.value)
