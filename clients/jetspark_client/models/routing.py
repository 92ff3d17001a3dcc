from enum import StrEnum

class Routing(StrEnum):
    ALL_TO_ONE = "all_to_one"
    BROADCAST = "broadcast"
    PARTITIONED = "partitioned"
    UNICAST = "unicast"

    def __str__(self) -> str:
        return str(self.value)
