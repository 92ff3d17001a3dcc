"""SPEC §4 routing inside the JVM: every item lands on exactly the processor the formulas say.

Processor g of a vertex is Spark partition g. To send a row to partition t we repartition on
an integer whose Spark ``hash()`` (MurmurHash3, seed 42) lands on t: a small lookup table per
partition count, computed once with mmh3 (ENVIRONMENT.md).
"""

from __future__ import annotations

from functools import cache

import mmh3
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
)

from jetspark.dag.model import Routing
from jetspark.dag.partitioning import MURMUR3_SEED
from jetspark.dag.plan import EdgePlan, Exchange, VertexPlan

TARGET = "__jetspark_target"
_INTEGRAL = (ByteType, ShortType, IntegerType, LongType, BooleanType)
_EMPTY_HASH = int(mmh3.hash(b"", MURMUR3_SEED))


@cache
def slot_table(partitions: int) -> tuple[int, ...]:
    """For each target t, an int i with pmod(hash(i), partitions) == t."""
    table: dict[int, int] = {}
    candidate = 0
    while len(table) < partitions:
        target = int(mmh3.hash(candidate.to_bytes(4, "little", signed=True), MURMUR3_SEED))
        table.setdefault(target % partitions, candidate)
        candidate += 1
    return tuple(table[t] for t in range(partitions))


def place(frame: DataFrame, target: Column, partitions: int) -> DataFrame:
    """Repartition so that each row sits in partition ``target`` exactly."""
    slots = F.array(*[F.lit(i) for i in slot_table(partitions)])
    slot = F.element_at(slots, target.cast("int") + 1)
    return frame.withColumn(TARGET, slot).repartition(partitions, TARGET).drop(TARGET)


def murmur3_pid(key: Column, key_type: DataType, partition_count: int) -> Column:
    """``mmh3.hash(canonical(key), 42) % partition_count`` computed by Spark."""
    if isinstance(key_type, _INTEGRAL):
        hashed = F.hash(key.cast("bigint"))
    else:
        text = key if isinstance(key_type, StringType | BinaryType) else key.cast("string")
        raw = F.encode(text, "UTF-8") if not isinstance(key_type, BinaryType) else text
        padded = F.concat(
            raw, F.substring(F.unhex(F.lit("000000")), 1, F.pmod(-F.octet_length(raw), F.lit(4)))
        )
        hashed = F.hash(padded)
    return F.when(key.isNull(), F.lit(_EMPTY_HASH % partition_count)).otherwise(
        F.pmod(hashed, F.lit(partition_count))
    )


def route(
    frame: DataFrame, edge: EdgePlan, sender: VertexPlan, receiver: VertexPlan, partition_count: int
) -> DataFrame:
    """The receiver's view of one inbound edge: ``receiver.parallelism`` partitions."""
    if edge.exchange is Exchange.fused:
        return frame
    lp_u, lp_v, n = sender.local_parallelism, receiver.local_parallelism, receiver.parallelism
    member = F.floor(F.spark_partition_id() / F.lit(lp_u))
    if edge.routing is Routing.broadcast:
        first = F.lit(0) if edge.distributed else member * F.lit(lp_v)
        width = n if edge.distributed else lp_v
        copies = frame.withColumn("__copy", F.explode(F.sequence(F.lit(0), F.lit(width - 1))))
        return place(copies, first + F.col("__copy"), n).drop("__copy")
    if edge.routing is Routing.unicast:
        return frame.repartition(n)  # round-robin spray: counts differ by at most one
    if edge.routing is Routing.all_to_one:
        pid: Column = F.lit(edge.all_to_one_pid or 0)
    elif edge.partitioner == "spark_hash":
        key = F.expr(edge.key or "NULL")
        return place(frame, F.pmod(F.hash(key), F.lit(n)), n)
    else:
        key = F.expr(edge.key or "NULL")
        key_type = frame.select(key.alias("k")).schema["k"].dataType
        pid = murmur3_pid(key, key_type, partition_count)
    target = pid % F.lit(n) if edge.distributed else member * F.lit(lp_v) + pid % F.lit(lp_v)
    return place(frame, target, n)
