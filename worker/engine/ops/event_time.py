"""Event time: ``insert_watermarks`` and ``window``."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jetspark.dag import kinds as p
from jetspark.dag.plan import Exchange
from worker.engine.errors import EngineError
from worker.engine.expressions import user_column
from worker.engine.observed import ObservedAggregates
from worker.engine.ops.aggregation import held_then_kept
from worker.engine.ops.base import Op, OpContext, params_of
from worker.engine.routing import targeted
from worker.engine.state_columns import PROCESSOR
from worker.engine.streaming.scope import EpochScope
from worker.engine.windowing import END, closes, window_step


class InsertWatermarksOp(Op):
    """Items pass unchanged; in an epoch run, processor g's greatest timestamp this epoch
    moves its watermark (``top - allowed_lag_ms``), see ``streaming.watermarks``.

    The tops are observed while Spark computes the items for the vertices downstream (a
    window computes its windows before it needs the watermark), not by a job of their own.
    """

    forwards_own_watermarks = True

    def preserves_count(self, ctx: OpContext) -> bool:
        """In an epoch, where its tops' observation names its work; a batch run, a mere
        pass-through, is counted (and so named) where its output is read."""
        return ctx.epoch is not None

    def quiet(self, epoch: EpochScope, vertex: str, params: BaseModel) -> None:
        assert isinstance(params, p.InsertWatermarksParams)
        observe_watermarks(epoch, vertex, params, {})

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.InsertWatermarksParams)
        frame = ctx.only_input
        epoch = ctx.epoch
        if epoch is None:
            return frame
        ts, g = user_column(params.timestamp).cast("bigint"), F.spark_partition_id()
        n = ctx.vertex.parallelism
        tops = ObservedAggregates(
            frame, {f"top_{i}": F.max(F.when(g == i, ts)) for i in range(n)}, vertex=ctx.vertex.name
        )
        kept = tops.frame if computed_once(ctx) else ctx.keep(tops.frame)

        def observe() -> None:
            by_processor = {
                int(name.removeprefix("top_")): top
                for name, top in tops.values().items()
                if top is not None
            }
            observe_watermarks(epoch, ctx.vertex.name, params, by_processor)

        epoch.defer(observe)
        return kept


def computed_once(ctx: OpContext) -> bool:
    """Is the output computed by one Spark job before its watermarks are needed? So when
    its one consumer is a window, whose step computes (checkpoints) its windows before it
    coalesces. Otherwise it is kept (persisted): computed once, observed then, read by every
    consumer. Keeping every item of an epoch cost more than the window's whole step
    (``bench.streaming``: see docs/ENGINE.md, "Streams at Spark's speed")."""
    return len(ctx.outbound) == 1 and all(r.processor == "window" for r in ctx.receivers)


def observe_watermarks(
    epoch: EpochScope, vertex: str, params: p.InsertWatermarksParams, tops: dict[int, int]
) -> None:
    """An ``insert_watermarks`` vertex saw these greatest timestamps per processor this
    epoch (none at all in an epoch without input: only its idle clocks move)."""
    epoch.watermarks.observe_events(
        vertex,
        tops,
        allowed_lag_ms=params.allowed_lag_ms,
        idle_timeout_ms=params.idle_timeout_ms,
        now_ms=epoch.now_ms,
        max_lull_ms=params.max_lull_ms,
    )


class WindowOp(Op):
    """The seeds' windows over event time (``windowing.window_step``): each processor keeps
    its open windows as partial results between epochs and emits a window once the
    watermark it coalesced passes the window's end; late items are counted and dropped.

    It coalesces its watermarks itself, once its windows are computed: the job that
    computes them observes the timestamps upstream on the way (``InsertWatermarksOp``)."""

    coalesces_itself = True
    places_own_input = True
    """Partial windows travel over the exchange instead of items (see ``apply``)."""

    def __init__(self) -> None:
        self.ends: tuple[DataFrame, dict[int, int]] | None = None
        """The state last looked at and each processor's earliest open window end in it."""

    def wakes(
        self,
        state: DataFrame | None,
        before: Mapping[int, int | None],
        after: Mapping[int, int | None],
    ) -> bool:
        """A window closes when the watermark reaches its end: the earliest end per
        processor is read once per state (one small job over the checkpointed state)."""
        if state is None:
            return False
        if self.ends is None or self.ends[0] is not state:
            rows = state.groupBy(PROCESSOR).agg(F.min(END).alias("end")).collect()
            self.ends = (state, {int(r[PROCESSOR]): int(r["end"]) for r in rows})
        return closes(self.ends[1], after)

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.WindowParams)
        epoch = ctx.epoch
        if epoch is None:
            raise EngineError("a window runs in epochs")
        name, edge, items = ctx.vertex.name, ctx.inbound[0], ctx.only_input
        if edge.exchange is not Exchange.fused:
            # Each item named with its processor's SLOT where it is, not moved: the step
            # groups by (SLOT, key, window) first, so Spark's partial aggregation runs before
            # the shuffle and only partial windows travel, then places each processor's
            # windows on its partition (``placed_union``). The windows and the processors
            # they end up on are those of moving every item first (SPEC §4): Jet's
            # two-stage aggregation, as the batch ``aggregate`` does.
            items = targeted(items, edge, ctx.senders[0], ctx.vertex, ctx.partition_count)
        step = window_step(
            items,
            epoch.state_in.get(name),
            params,
            parallelism=ctx.vertex.parallelism,
            partition_count=ctx.partition_count,
            wm_before=epoch.watermarks.coalesced(name),
            wm_after=lambda: epoch.coalesce(name),
            final=epoch.final,
            keep=held_then_kept(ctx),
        )
        epoch.state_out[name] = step.state
        if step.late is not None:
            epoch.late_items[name] = step.late
        return step.output
