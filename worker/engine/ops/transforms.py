"""Stateless transforms: map, filter, flat_map, hash_join, sort."""

from __future__ import annotations

from functools import partial
from typing import Any

from pydantic import BaseModel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, MapType

from jetspark.dag import kinds as p
from worker.engine.accumulation import bounded
from worker.engine.expressions import user_column
from worker.engine.joining import join_step, joined
from worker.engine.ops.base import Op, OpContext, params_of
from worker.engine.routing import by_processor


class MapOp(Op):
    def preserves_count(self, ctx: OpContext) -> bool:
        return True

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.MapParams)
        return ctx.only_input.select(*[user_column(e).alias(f) for f, e in params.select.items()])


class FilterOp(Op):
    def apply(self, ctx: OpContext) -> DataFrame:
        return ctx.only_input.where(user_column(params_of(ctx, p.FilterParams).where))


class FlatMapOp(Op):
    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.FlatMapParams)
        return ctx.only_input.withColumn(params.as_, F.explode(user_column(params.explode)))

    def rows_counted_by(
        self, params: BaseModel, output: DataFrame | None
    ) -> tuple[str, str] | None:
        """``explode`` is Spark's ``Generate``, which counts the items it makes."""
        return ("Generate", params.as_) if isinstance(params, p.FlatMapParams) else None

    def emitted_per_item(self, params: BaseModel, received: DataFrame) -> Column | None:
        """In an epoch, the size of each item's array or map (``explode`` emits one item per
        element, none for an empty or null one), when its expression is deterministic: evaluated
        twice, it must give the same size both times."""
        if not isinstance(params, p.FlatMapParams):
            return None
        exploded = user_column(params.explode)
        probe = received.select(exploded)
        java: Any = probe._jdf  # py4j
        if not isinstance(probe.schema[0].dataType, ArrayType | MapType):
            return None  # not explodable: ``apply`` says so
        if not java.queryExecution().analyzed().deterministic():
            return None
        return F.greatest(F.coalesce(F.size(exploded), F.lit(0)), F.lit(0))


class HashJoinOp(Op):
    """Ordinal 0 is the build side (consumed first, by its priority), ordinal 1 the probe
    (``joining``). In a stream the build side is state carried from epoch to epoch, and the
    probe items wait while a bounded build side is still being read (``joining.join_step``).
    """

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.HashJoinParams)
        n = ctx.vertex.parallelism
        build, probe = (by_processor(frame, n) for frame in ctx.inputs)
        guard = partial(bounded, limit=ctx.max_records, vertex=ctx.vertex.name, what="build items")
        epoch = ctx.epoch
        if epoch is None:
            return joined(guard(build), probe, params)
        name = ctx.vertex.name
        build_sources = epoch.upstream_sources(ctx.inbound[0].source)
        complete_before, complete_after = epoch.complete(build_sources)
        step = join_step(
            build,
            probe,
            epoch.state_in.get(name),
            params,
            edges=(ctx.inbound[0], ctx.inbound[1]),
            parallelism=n,
            partition_count=ctx.partition_count,
            complete_before=complete_before,
            ready=complete_after or bool(build_sources & epoch.endless),
            keep=partial(epoch.checkpointed, name),
            guard=guard,
        )
        epoch.state_out[name] = step.state
        return step.output


class SortOp(Op):
    """Each processor sorts what it received; a total order is a sort of parallelism 1."""

    def preserves_count(self, ctx: OpContext) -> bool:
        return True

    def apply(self, ctx: OpContext) -> DataFrame:
        by = params_of(ctx, p.SortParams).by
        columns = [user_column(b) for b in ([by] if isinstance(by, str) else by)]
        items = bounded(ctx.only_input, ctx.max_records, ctx.vertex.name, "items to sort")
        return items.sortWithinPartitions(*columns)
