"""The translation table: one small op per processor kind, ``apply(context) -> DataFrame``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jetspark.dag import processors as p
from jetspark.dag.plan import EdgePlan, VertexPlan
from worker.engine.python import PythonOp
from worker.engine.routing import place


class EngineError(Exception):
    """A vertex could not be built or run."""


@dataclass
class OpContext:
    """What an op sees: its vertex, params and already-routed inbound frames (by ordinal)."""

    spark: SparkSession
    vertex: VertexPlan
    params: BaseModel
    inputs: list[DataFrame]
    results_cap: int
    sink_results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    inbound: list[EdgePlan] = field(default_factory=list)
    """Inbound edges, index = to_ordinal, matching ``inputs``."""
    outbound: list[EdgePlan] = field(default_factory=list)
    """Outbound edges, index = from_ordinal."""

    @property
    def only_input(self) -> DataFrame:
        return self.inputs[0]


class Op(Protocol):
    def apply(self, ctx: OpContext) -> DataFrame: ...


ParamsT = TypeVar("ParamsT", bound=BaseModel)


def _params(ctx: OpContext, kind: type[ParamsT]) -> ParamsT:
    if not isinstance(ctx.params, kind):
        raise EngineError(f"vertex {ctx.vertex.name}: params are not {kind.__name__}")
    return ctx.params


class ItemsSourceOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.ItemsSource)
        n = ctx.vertex.parallelism
        if not params.items:
            return ctx.spark.range(0, numPartitions=n).select()
        rows = [{**item, "__index": i} for i, item in enumerate(params.items)]
        frame = ctx.spark.createDataFrame(rows)
        ordered = [c for c in dict.fromkeys(k for item in params.items for k in item)]
        placed = place(frame, F.col("__index") % F.lit(n), n)  # item i to processor i % P
        return placed.select(*ordered)


class SequenceSourceOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.SequenceSource)
        if params.count is None:
            raise EngineError("unbounded sequences need the streaming engine (not built yet)")
        frame = ctx.spark.range(
            params.start, params.start + params.count, numPartitions=ctx.vertex.parallelism
        )
        return frame.select(F.col("id").alias("seq"), F.col("id").alias("ts"))


class FilesSourceOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.FilesSource)
        reader = ctx.spark.read
        if params.format is p.FileFormat.csv:
            reader = reader.option("header", "true").option("inferSchema", "true")
        frame = reader.format(params.format.value).load(params.path)
        if params.format is p.FileFormat.text:
            frame = frame.withColumnRenamed("value", "line")
        return frame.repartition(ctx.vertex.parallelism)


class MapOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.MapParams)
        return ctx.only_input.select(*[F.expr(e).alias(f) for f, e in params.select.items()])


class FilterOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        return ctx.only_input.where(F.expr(_params(ctx, p.FilterParams).where))


class FlatMapOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.FlatMapParams)
        return ctx.only_input.withColumn(params.as_, F.explode(F.expr(params.explode)))


_FUNCTION = re.compile(r"^\s*(\w+)\s*\(")
_MERGE = {"count": "sum", "sum": "sum", "min": "min", "max": "max", "first": "first",
          "last": "last", "bool_and": "bool_and", "bool_or": "bool_or"}  # fmt: skip


class AggregateOp:
    """single: one aggregation; accumulate: partial results; combine: merges the partials."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.AggregateParams)
        frame = ctx.only_input
        if params.stage == "combine":
            columns = [self._merge(field, e) for field, e in params.aggregations.items()]
        else:
            columns = [F.expr(e).alias(field) for field, e in params.aggregations.items()]
        if params.key is None:
            return frame.agg(*columns)
        return frame.groupBy(F.expr(params.key).alias("key")).agg(*columns)

    @staticmethod
    def _merge(field_name: str, expression: str) -> Any:
        match = _FUNCTION.match(expression)
        merge = _MERGE.get(match.group(1).lower()) if match else None
        if merge is None:
            raise EngineError(
                f"combine cannot merge {expression!r}; mergeable: {', '.join(sorted(_MERGE))}"
            )
        return F.expr(f"{merge}(`{field_name}`)").alias(field_name)


class HashJoinOp:
    """Ordinal 0 is the build side (consumed first, by its priority), ordinal 1 the probe."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.HashJoinParams)
        build, probe = ctx.inputs
        build_key, probe_key = F.expr(params.build_key), F.expr(params.probe_key)
        build = build.withColumn("__build_key", build_key)
        extra = [c for c in build.columns if c not in probe.columns and c != "__build_key"]
        joined = probe.withColumn("__probe_key", probe_key).join(
            F.broadcast(build.select("__build_key", *extra)),
            F.col("__probe_key") == F.col("__build_key"),
            params.how,
        )
        return joined.select(*probe.columns, *extra)


class SortOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        by = _params(ctx, p.SortParams).by
        return ctx.only_input.orderBy(*[F.expr(b) for b in ([by] if isinstance(by, str) else by)])


def json_safe(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes | bytearray):
        return value.hex()
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    return value


class ResultsSinkOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        frame = ctx.inputs[0] if len(ctx.inputs) == 1 else _union(ctx.inputs)
        rows = frame.limit(ctx.results_cap).collect()
        ctx.sink_results[ctx.vertex.name] = [json_safe(r.asDict(recursive=True)) for r in rows]
        return frame


class LoggerSinkOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        return ctx.inputs[0] if len(ctx.inputs) == 1 else _union(ctx.inputs)


class FilesSinkOp:
    def apply(self, ctx: OpContext) -> DataFrame:
        params = _params(ctx, p.FilesSink)
        frame = ctx.inputs[0] if len(ctx.inputs) == 1 else _union(ctx.inputs)
        out = frame
        if params.format is p.FileFormat.text:
            out = frame.select(F.to_json(F.struct(*frame.columns)).alias("value"))
        writer = out.write.mode("overwrite").format(params.format.value)
        if params.format is p.FileFormat.csv:
            writer = writer.option("header", "true")
        writer.save(params.path)
        return frame


class RedisMapSinkOp:
    """A Redis hash per map, like the seeds' IMap: field = key, value = the item as JSON."""

    def apply(self, ctx: OpContext) -> DataFrame:
        from jetspark.queue.keys import Keys
        from jetspark.settings import RedisSettings

        params = _params(ctx, p.RedisMapSink)
        settings = RedisSettings()
        url, hash_key = settings.url, Keys(settings.namespace).redis_map(params.map)
        frame = ctx.inputs[0] if len(ctx.inputs) == 1 else _union(ctx.inputs)
        keyed = frame.select(
            F.expr(params.key).cast("string").alias("k"),
            F.to_json(F.struct(*frame.columns)).alias("v"),
        )

        def write(rows: Any) -> None:
            import redis as redis_client

            client = redis_client.Redis.from_url(url or "redis://127.0.0.1:6379/0")
            pipe = client.pipeline(transaction=False)
            for row in rows:
                pipe.hset(hash_key, row["k"], row["v"])
            pipe.execute()

        keyed.foreachPartition(write)
        return frame


def _union(frames: list[DataFrame]) -> DataFrame:
    first, *rest = frames
    for other in rest:
        first = first.unionByName(other, allowMissingColumns=True)
    return first


OPS: dict[str, Op] = {
    "source.items": ItemsSourceOp(),
    "source.sequence": SequenceSourceOp(),
    "source.files": FilesSourceOp(),
    "map": MapOp(),
    "filter": FilterOp(),
    "flat_map": FlatMapOp(),
    "aggregate": AggregateOp(),
    "hash_join": HashJoinOp(),
    "sort": SortOp(),
    "sink.results": ResultsSinkOp(),
    "sink.logger": LoggerSinkOp(),
    "sink.files": FilesSinkOp(),
    "sink.redis_map": RedisMapSinkOp(),
    "python": PythonOp(),
}
