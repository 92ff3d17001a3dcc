"""The translation table: processor kind -> its op class; a job gets its own instances."""

from __future__ import annotations

from jetspark.dag.plan import ExecutionPlan
from worker.engine.ops.aggregation import AggregateOp
from worker.engine.ops.base import Op
from worker.engine.ops.event_time import InsertWatermarksOp, WindowOp
from worker.engine.ops.jdbc import JdbcSinkOp, JdbcSourceOp
from worker.engine.ops.kafka import KafkaSinkOp, KafkaSourceOp
from worker.engine.ops.python import PythonOp
from worker.engine.ops.sinks import (
    FilesSinkOp,
    LoggerSinkOp,
    RedisMapSinkOp,
    RedisStreamSinkOp,
    ResultsSinkOp,
)
from worker.engine.ops.sources import (
    FilesSourceOp,
    ItemsSourceOp,
    RedisStreamSourceOp,
    SequenceSourceOp,
)
from worker.engine.ops.transforms import FilterOp, FlatMapOp, HashJoinOp, MapOp, SortOp

OP_TYPES: dict[str, type[Op]] = {
    "source.items": ItemsSourceOp,
    "source.sequence": SequenceSourceOp,
    "source.files": FilesSourceOp,
    "source.redis_stream": RedisStreamSourceOp,
    "source.jdbc": JdbcSourceOp,
    "source.kafka": KafkaSourceOp,
    "map": MapOp,
    "filter": FilterOp,
    "flat_map": FlatMapOp,
    "aggregate": AggregateOp,
    "insert_watermarks": InsertWatermarksOp,
    "window": WindowOp,
    "hash_join": HashJoinOp,
    "sort": SortOp,
    "sink.results": ResultsSinkOp,
    "sink.logger": LoggerSinkOp,
    "sink.files": FilesSinkOp,
    "sink.redis_map": RedisMapSinkOp,
    "sink.redis_stream": RedisStreamSinkOp,
    "sink.jdbc": JdbcSinkOp,
    "sink.kafka": KafkaSinkOp,
    "python": PythonOp,
}


def ops_for(plan: ExecutionPlan) -> dict[str, Op]:
    """One op per vertex of this job (a kind without an op is refused when it runs)."""
    return {v.name: OP_TYPES[v.processor]() for v in plan.vertices if v.processor in OP_TYPES}


def op_type(kind: str) -> type[Op]:
    """The op class of a processor kind (the base ``Op`` for a kind without one)."""
    return OP_TYPES.get(kind, Op)
