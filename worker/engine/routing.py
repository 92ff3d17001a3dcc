"""SPEC §4 routing inside the JVM: every item lands on exactly the processor the formulas say.

Processor g of a vertex is Spark partition g. To send a row to partition t we repartition on
an integer whose Spark ``hash()`` (MurmurHash3, seed 42) lands on t: a small lookup table per
partition count, computed once with mmh3 (ENVIRONMENT.md).

A routed frame keeps that integer in the ``SLOT`` column, so Spark knows the frame is
hash-partitioned on it: an op that groups or joins on ``(SLOT, key)`` runs inside the
partition it received, with no further exchange (processor g works on what it received).
"""

from __future__ import annotations

from functools import cache, lru_cache

import mmh3
from pyspark import SparkContext
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, DataType, StringType

from jetspark.dag.model import Routing
from jetspark.dag.partitioning import MURMUR3_SEED
from jetspark.dag.plan import EdgePlan, Exchange, VertexPlan
from worker.engine.canonical_key import INTEGRAL, canonical_text
from worker.engine.custom_partitioner import python_pid
from worker.engine.expressions import user_column
from worker.engine.let import let

SLOT = "__jetspark_target"
"""The column a routed frame is hash-partitioned on: one value per receiving processor."""
TARGET_PROCESSOR = "__jetspark_processor"
"""A frame whose rows are not on their processor's partition yet names it in this column,
for a consumer that needs no more than that (``sink.results`` over a fused edge). Not
``state_columns.PROCESSOR``, the processor a state row is kept for."""
_EMPTY_HASH = int(mmh3.hash(b"", MURMUR3_SEED))
_ROW_BITS = 33
"""``monotonically_increasing_id()`` is ``partition << 33 | row index within the partition``."""


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


def with_slot(frame: DataFrame, target: Column, partitions: int) -> DataFrame:
    """Name each row's target partition in ``SLOT``, without moving it yet."""
    frame = without_slot(frame)
    return frame.withColumn(SLOT, slot_of(frame, target, partitions))


def slot_of(frame: DataFrame, target: Column, partitions: int) -> Column:
    """The ``SLOT`` of target partition ``target`` (a column over ``frame``)."""
    slots = _slots_of(frame.sparkSession.sparkContext, partitions)
    return F.element_at(slots, target.cast("int") + 1)


@lru_cache(maxsize=64)
def _slots_of(context: SparkContext, partitions: int) -> Column:
    """``slot_table`` as a Spark array literal, kept per JVM (a round trip per element)."""
    return F.array(*[F.lit(i) for i in slot_table(partitions)])


def place(frame: DataFrame, target: Column, partitions: int) -> DataFrame:
    """Repartition so that each row sits in partition ``target`` exactly; keeps ``SLOT``."""
    return with_slot(frame, target, partitions).repartition(partitions, SLOT)


def without_slot(frame: DataFrame) -> DataFrame:
    return frame.drop(SLOT) if SLOT in frame.columns else frame


def by_processor(frame: DataFrame, partitions: int) -> DataFrame:
    """The frame hash-partitioned on ``SLOT``, each row still in the partition it was in.

    A routed frame already is; a frame that came over a fused edge is re-placed onto its own
    partition index (an exchange that moves no row to another processor).
    """
    if SLOT in frame.columns:
        return frame
    return place(frame, F.spark_partition_id(), partitions)


def spray(*, first: Column, width: int) -> Column:
    """Round-robin over ``width`` candidates from ``first``: each sender starts at its own
    partition index and deals its rows in turn, so per-sender counts differ by at most one."""
    sender = F.spark_partition_id().cast("long")
    return first + F.pmod(sender + row_in_partition(), F.lit(width))


def row_in_partition() -> Column:
    """Each row's index within its partition (0, 1, ... in the order the rows come)."""
    sender = F.spark_partition_id().cast("long")
    return F.monotonically_increasing_id() - F.shiftleft(sender, _ROW_BITS)


def murmur3_pid(key: Column, key_type: DataType, partition_count: int) -> Column:
    """``mmh3.hash(canonical(key), 42) % partition_count`` computed by Spark, for every key
    type ``canonical`` writes (``canonical_key``); ``UnroutableKey`` for one it cannot."""
    if isinstance(key_type, INTEGRAL):
        hashed = F.hash(key.cast("bigint"))
    elif isinstance(key_type, StringType | BinaryType):
        hashed = _padded_hash(key.cast("binary"))  # a string's bytes are its UTF-8
    else:  # the JSON is bound once, not written twice
        hashed = let(canonical_text(key, key_type).cast("binary"), _padded_hash)
    return F.when(key.isNull(), F.lit(_EMPTY_HASH % partition_count)).otherwise(
        F.pmod(hashed, F.lit(partition_count))
    )


def _padded_hash(raw: Column) -> Column:
    """Murmur3 of ``raw`` padded with NULs to a multiple of 4 bytes, in one step."""
    width = F.floor((F.octet_length(raw) + F.lit(3)) / F.lit(4)) * F.lit(4)
    return F.hash(F.call_function("rpad", raw, width.cast("int"), F.lit(bytearray(1))))


def partition_id(frame: DataFrame, edge: EdgePlan, partition_count: int) -> Column:
    """The pid of each item on a partitioned or all-to-one edge."""
    if edge.routing is Routing.all_to_one:
        return F.lit(edge.all_to_one_pid or 0)
    key = F.lit(None) if not edge.key else user_column(edge.key)
    if edge.partitioner == "spark_hash":
        return F.pmod(F.hash(key), F.lit(partition_count))
    if edge.partitioner.startswith("python:"):
        return python_pid(key, edge.partitioner, partition_count)
    key_type = frame.select(key.alias("k")).schema["k"].dataType
    if not edge.key:
        return murmur3_pid(key, key_type, partition_count)
    return _murmur3_pid_of(frame.sparkSession.sparkContext, edge.key, key_type, partition_count)


@lru_cache(maxsize=512)
def _murmur3_pid_of(
    context: SparkContext, key: str, key_type: DataType, partition_count: int
) -> Column:
    """``murmur3_pid`` of the checked key expression, kept per JVM like the expression
    itself: the same edge of the same DAG builds the same Column, for 70-odd round trips."""
    return murmur3_pid(user_column(key), key_type, partition_count)


def sender_member(sender: VertexPlan) -> Column:
    """The member of the processor (partition) a row is on: g // local_parallelism."""
    return F.floor(F.spark_partition_id() / F.lit(sender.local_parallelism))


def candidates(edge: EdgePlan, receiver: VertexPlan, member: Column) -> tuple[Column, int]:
    """First receiving processor and how many there are for a sender on ``member``."""
    if edge.distributed:
        return F.lit(0), receiver.parallelism
    return member * F.lit(receiver.local_parallelism), receiver.local_parallelism


def targeted(
    frame: DataFrame, edge: EdgePlan, sender: VertexPlan, receiver: VertexPlan, partition_count: int
) -> DataFrame:
    """The items of a non-fused edge, each with the ``SLOT`` of its receiving processor (a
    broadcast item once per receiver), still on the sender's partitions."""
    frame = without_slot(frame)
    n = receiver.parallelism
    first, width = candidates(edge, receiver, sender_member(sender))
    if edge.routing is Routing.broadcast:
        copies = frame.withColumn("__copy", F.explode(F.sequence(F.lit(0), F.lit(width - 1))))
        return copies.withColumn(SLOT, slot_of(copies, first + F.col("__copy"), n)).drop("__copy")
    if edge.routing is Routing.unicast:
        return frame.withColumn(SLOT, slot_of(frame, spray(first=first, width=width), n))
    pid = partition_id(frame, edge, partition_count)
    if edge.partitioner.startswith("python:"):
        # Computed into a column first: the custom partitioner's Python step then runs once
        # per item, not once per use of the expression.
        keyed = frame.withColumn("__pid", pid)
        slot = slot_of(keyed, first + F.pmod(F.col("__pid"), F.lit(width)), n)
        return keyed.withColumn(SLOT, slot).drop("__pid")
    return frame.withColumn(SLOT, slot_of(frame, first + F.pmod(pid, F.lit(width)), n))


def route(
    frame: DataFrame, edge: EdgePlan, sender: VertexPlan, receiver: VertexPlan, partition_count: int
) -> DataFrame:
    """The receiver's view of one inbound edge: ``receiver.parallelism`` partitions."""
    if edge.exchange is Exchange.fused:
        return frame  # processor g hands its items to processor g: partitions stay as they are
    slotted = targeted(frame, edge, sender, receiver, partition_count)
    return slotted.repartition(receiver.parallelism, SLOT)
