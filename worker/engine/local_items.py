"""``source.items`` without an exchange: each processor parses its own items from a literal.

The items are few and known on the driver. Rather than spreading them and repartitioning
them onto processor ``i % P`` (a shuffle and a Spark job of its own), ``spark.range`` gives
one row per processor on exactly its partition, and that row expands into the processor's
items in order, parsed from a JSON literal with the schema Spark would infer for them. Taken
only when JSON carries every value exactly into that schema: flat scalars (strings, 64-bit
integers, finite floats, booleans, nulls), one type per field, each field typed by some item.
Anything else goes the general way (``createDataFrame`` and a repartition).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

MAX_LITERAL_BYTES = 256 * 1024
"""Items whose JSON is larger travel the general way (a literal rides in every task)."""

_TYPES: dict[type, DataType] = {
    str: StringType(),
    int: LongType(),
    float: DoubleType(),
    bool: BooleanType(),
}
_INT64 = (-(2**63), 2**63 - 1)


def _exact(value: Any) -> bool:
    if type(value) is int:
        return _INT64[0] <= value <= _INT64[1]
    if type(value) is float:
        return math.isfinite(value)
    return value is None or type(value) in _TYPES


def _schema(items: Sequence[dict[str, Any]], ordered: list[str]) -> StructType | None:
    """What ``createDataFrame`` infers for flat scalar items, or None if unsure."""
    kinds: dict[str, type] = {}
    for item in items:
        for key, value in item.items():
            if not _exact(value):
                return None
            if value is None:
                continue
            if kinds.setdefault(key, type(value)) is not type(value):
                return None  # mixed types: inference merges or refuses them
    if not ordered or set(kinds) != set(ordered):
        return None  # a field only ever null: inference refuses it
    return StructType([StructField(key, _TYPES[kinds[key]], True) for key in ordered])


def local_items(
    spark: SparkSession, items: Sequence[dict[str, Any]], processors: int, ordered: list[str]
) -> DataFrame | None:
    """Item i on partition ``i % processors``, in order, columns ``ordered``; or None when
    the items need the general way."""
    schema = _schema(items, ordered)
    if schema is None:
        return None
    shares = [json.dumps(list(items[g::processors])) for g in range(processors)]
    if sum(len(share) for share in shares) > MAX_LITERAL_BYTES:
        return None
    mine = F.element_at(F.array(*[F.lit(share) for share in shares]), F.col("id").cast("int") + 1)
    parsed = F.from_json(mine, ArrayType(schema))
    # The struct's fields are ``ordered``: the columns come named and ordered already.
    return spark.range(0, processors, 1, numPartitions=processors).select(F.inline(parsed))
