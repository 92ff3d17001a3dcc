"""The one partition stream a Python processor reads: processor g reads Spark partition g.

- no inbound edge (a source): ``P`` empty-ish partitions (one row each, never read);
- one inbound edge: its routed frame as is, already in ``P`` partitions;
- several: each routed frame is packed to ``__in_ordinal``, ``__in_priority`` and the item as
  JSON (so differently shaped inputs can share a stream), tagged with the partition it sits
  in, unioned, put back so that partition g of every edge lands in partition g, and sorted
  within each partition by (priority, ordinal): lower priority numbers are delivered in full
  first.

In an epoch of a streaming job whose vertex has state, processor g's snapshot entries
(``STATE_KEY``, ``STATE_VALUE``) are put at the head of partition g (``with_state``).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jetspark.dag.expressions import quote_identifier
from jetspark.dag.plan import EdgePlan
from worker.engine.python.arrow_io import (
    IN_ORDINAL,
    IN_PRIORITY,
    PACKED_ITEM,
    STATE_KEY,
    STATE_VALUE,
)
from worker.engine.routing import SLOT, by_processor, place
from worker.engine.state_columns import PROCESSOR

_HOME = "__home_partition"


def source_frame(spark: SparkSession, parallelism: int) -> DataFrame:
    return spark.range(0, parallelism, numPartitions=parallelism).select()


def packed_frame(
    inputs: list[DataFrame],
    inbound: list[EdgePlan],
    parallelism: int,
    state: DataFrame | None = None,
) -> DataFrame:
    packed = [
        frame.select(
            F.lit(edge.to_ordinal).cast("int").alias(IN_ORDINAL),
            F.lit(edge.priority).cast("int").alias(IN_PRIORITY),
            F.to_json(F.struct(*[F.col(quote_identifier(c)) for c in frame.columns])).alias(
                PACKED_ITEM
            ),
            F.spark_partition_id().alias(_HOME),
        )
        for frame, edge in zip(inputs, inbound, strict=True)
    ]
    union = packed[0]
    for other in packed[1:]:
        union = union.unionByName(other)
    if state is None:
        placed = place(union, F.col(_HOME), parallelism)
        return placed.sortWithinPartitions(IN_PRIORITY, IN_ORDINAL).select(IN_ORDINAL, PACKED_ITEM)
    entries = state.select(F.col(PROCESSOR).alias(_HOME), STATE_KEY, STATE_VALUE)
    union = union.unionByName(entries, allowMissingColumns=True)
    placed = place(union, F.col(_HOME), parallelism)
    ordered = placed.sortWithinPartitions(F.col(STATE_KEY).isNull(), IN_PRIORITY, IN_ORDINAL)
    return ordered.select(IN_ORDINAL, PACKED_ITEM, STATE_KEY, STATE_VALUE)


def with_state(items: DataFrame, state: DataFrame, parallelism: int) -> DataFrame:
    """Items (one edge's, or a source's placeholder rows) with processor g's entries at the
    head of partition g. Items keep the partition they are in (their ``SLOT``)."""
    items = by_processor(items, parallelism)
    entries = state.select(SLOT, STATE_KEY, STATE_VALUE)
    both = items.unionByName(entries, allowMissingColumns=True).repartition(parallelism, SLOT)
    return both.sortWithinPartitions(F.col(STATE_KEY).isNull()).drop(SLOT)
