"""Source ops: items, sequence, files, Redis streams; each with its planner and boundedness."""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jetspark.dag import kinds as p
from jetspark.dag.data_paths import PathRefused, check_path, readable_files
from jetspark.dag.expressions import quote_identifier
from jetspark.settings import DataSettings
from worker.engine.contract import RedisTarget
from worker.engine.errors import EngineError
from worker.engine.local_items import local_items
from worker.engine.ops.base import (
    OpContext,
    SourceOp,
    nothing,
    outbox_capacity,
    params_of,
    read_once,
)
from worker.engine.redis_streams import RedisStreamPlanner, stream_frame
from worker.engine.routing import (
    place,
    spray,
)
from worker.engine.sequence import Stamps, epoch_sequence_frame, sequence_frame
from worker.engine.streaming.scope import EpochScope
from worker.engine.streaming.source_planners import FilesPlanner, SequencePlanner, SourcePlanner


class ItemsSourceOp(SourceOp):
    """Item i goes to processor i % P; bounded, read in the first epoch (``OncePlanner``)."""

    replayable = True

    def apply(self, ctx: OpContext) -> DataFrame:
        frame = self.items(ctx)
        if not read_once(ctx):
            return nothing(frame)
        params = params_of(ctx, p.ItemsSource)
        if ctx.epoch is not None and params.timestamp_field is not None:
            self.emit_watermarks(ctx.epoch, ctx.vertex.name, ctx.vertex.parallelism, params)
        return frame

    def known_count(self, ctx: OpContext) -> int | None:
        return len(params_of(ctx, p.ItemsSource).items)

    @staticmethod
    def emit_watermarks(
        epoch: EpochScope, vertex: str, parallelism: int, params: p.ItemsSource
    ) -> None:
        """Processor g's watermark: the greatest ``timestamp_field`` of its items (i % P ==
        g), known here on the driver; a processor without items is idle from the start."""
        tops: dict[int, int] = {}
        for i, item in enumerate(params.items):
            value = item.get(params.timestamp_field or "")
            if isinstance(value, int):  # every item's, as validation checked
                tops[i % parallelism] = max(tops.get(i % parallelism, value), value)
        epoch.watermarks.observe_events(
            vertex, tops, allowed_lag_ms=0, idle_timeout_ms=0, now_ms=epoch.now_ms
        )

    def items(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.ItemsSource)
        n = ctx.vertex.parallelism
        ordered = [c for c in dict.fromkeys(k for item in params.items for k in item)]
        local = local_items(ctx.spark, params.items, n, ordered)
        if local is not None:
            return local  # no exchange, no Spark job of its own
        rows = [{**item, "__index": i} for i, item in enumerate(params.items)]
        frame = ctx.spark.createDataFrame(rows)
        columns = [F.col(quote_identifier(c)) for c in ordered]
        return place(frame, F.col("__index") % F.lit(n), n).select(*columns)


class SequenceSourceOp(SourceOp):
    """Processor g emits its share of the sequence (see ``worker.engine.sequence``)."""

    replayable = True

    def planner(self, redis: RedisTarget) -> SourcePlanner:
        return SequencePlanner()

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.SequenceSource)
        n = ctx.vertex.parallelism
        if ctx.epoch is None:
            if params.count is None:
                raise EngineError("an unbounded sequence runs in epochs")
            return sequence_frame(
                ctx.spark,
                start=params.start,
                count=params.count,
                parallelism=n,
                batch_rows=outbox_capacity(ctx),
            )
        planned = ctx.epoch.ranges[ctx.vertex.name]
        low, high = int(planned["low"]), int(planned["high"])
        stamps = Stamps(params.start, int(planned["t0_ms"]), params.rate_per_s, planned["stamp_ms"])
        if any(receiver.processor == "python" for receiver in ctx.receivers):
            # Its task runs two Python steps, which holds Spark's turn-taking over its idle
            # Python workers steady for the receiver: it takes its kept instance back
            # (``python/instances.py``), where a JVM sequence left it one worker in turn.
            return sequence_frame(
                ctx.spark,
                start=low,
                count=high - low,
                parallelism=n,
                stamps=stamps,
                batch_rows=outbox_capacity(ctx),
            )
        return epoch_sequence_frame(
            ctx.spark, start=low, count=high - low, parallelism=n, stamps=stamps
        )


class FilesSourceOp(SourceOp):
    """Spark's readers; file splits are shared out over the P processors (round-robin when
    there are fewer splits than processors)."""

    replayable = True

    def planner(self, redis: RedisTarget) -> SourcePlanner:
        return FilesPlanner()

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.FilesSource)
        paths: str | list[str] = params.path
        if ctx.epoch is not None and params.watch:
            paths = ctx.epoch.ranges[ctx.vertex.name]["files"]
            if not paths:
                return self.empty(ctx, params)
        elif not read_once(ctx):
            return nothing(self.read(ctx, params, paths))
        return self.read(ctx, params, paths)

    def rows_counted_by(
        self, params: BaseModel, output: DataFrame | None
    ) -> tuple[str, str] | None:
        """A text file's lines are counted by the scan that reads them, when the files have no
        partition columns: a filter on one would prune files out of the scan, and the source
        emits their lines all the same."""
        if not isinstance(params, p.FilesSource) or params.format is not p.FileFormat.text:
            return None
        return ("Scan text", "line") if output is not None and output.columns == ["line"] else None

    def empty(self, ctx: OpContext, params: p.FilesSource) -> DataFrame:
        """No new file this epoch: no rows, the columns of the files seen before if any."""
        seen = ctx.epoch.ranges[ctx.vertex.name].get("seen_any") if ctx.epoch else None
        if seen:
            return nothing(self.read(ctx, params, [seen]))
        columns = "line string" if params.format is p.FileFormat.text else "value string"
        return ctx.spark.createDataFrame([], columns)

    def read(self, ctx: OpContext, params: p.FilesSource, paths: str | list[str]) -> DataFrame:
        reader = ctx.spark.read
        if params.format is p.FileFormat.csv:
            reader = reader.option("header", "true").option("inferSchema", "true")
        named = [paths] if isinstance(paths, str) else paths
        files = _readable(params.path, named, ctx.data)
        if not files:
            raise EngineError(f"source.files: nothing to read at {params.path!r}")
        root = check_path(params.path, ctx.data).location
        if os.path.isdir(root):
            reader = reader.option("basePath", root)  # partition columns, as for the directory
        if params.format is p.FileFormat.text:  # named by the scan itself: see rows_counted_by
            reader = reader.schema("line string")
        frame = reader.format(params.format.value).load(files)
        n = ctx.vertex.parallelism
        # The scan's splits as Spark plans them (its RDD's partitions, without PySpark's
        # Python RDD around them: a third of the cost).
        java: Any = frame._jdf  # py4j
        splits = int(java.queryExecution().executedPlan().execute().getNumPartitions())
        if splits == n:  # split i is processor i's already; a coalesce would only break
            return frame  # Spark's code generation between the read and what follows
        if splits > n:
            return frame.coalesce(n)  # whole file splits per processor, without a shuffle
        return place(frame, spray(first=F.lit(0), width=n), n)


def _readable(path: str, paths: list[str], data: DataSettings | None) -> list[str]:
    """Every file Spark is to read, checked under the data roots just before it reads."""
    check_path(path, data)  # the roots may have changed since the job was accepted
    try:
        return [file for named in paths for file in readable_files(check_path(named, data), data)]
    except PathRefused as error:
        raise EngineError(f"source.files: {error}") from None


class RedisStreamSourceOp(SourceOp):
    """Exactly the entries the epoch's range names: processor g reads streams g, g+P..."""

    def planner(self, redis: RedisTarget) -> SourcePlanner:
        return RedisStreamPlanner(redis.url, redis.user_stream, cluster=redis.cluster)

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.RedisStreamSource)
        if ctx.epoch is None:
            raise EngineError("source.redis_stream is unbounded: it runs in epochs")
        planned = ctx.epoch.ranges[ctx.vertex.name]["streams"]
        ranges = [(s, planned[s]["after"], planned[s]["until"]) for s in params.streams]
        return stream_frame(
            ctx.spark,
            ctx.job_redis.url,
            ranges,
            ctx.vertex.parallelism,
            key=ctx.job_redis.user_stream,
            cluster=ctx.job_redis.cluster,
            batch=outbox_capacity(ctx),
        )
