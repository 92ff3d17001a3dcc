"""The ``window`` vertex of the epoch-based streaming engine (SPEC §5, the seeds' windows).

Each processor g keeps its own windows, per key when keyed, as partial aggregation results
(``stateful_aggregate``): never the items themselves. One epoch:

1. drops the late items (``ts < wm_before[g]``: their windows may already have been emitted)
   and counts them per processor;
2. accumulates the others into a partial per (processor, key, window) -- a sliding window's
   item into every window that contains it, a session's item into a session [ts, ts + gap);
3. merges those with the carried state: equal windows merge; sessions that overlap merge,
   which is how an item bridges two sessions, stored or new;
4. emits each window whose end is at most ``wm_after[g]`` (every window when ``final``) and
   carries the rest.

A window emitted at ``wm`` can never receive another item: a later item that is not late has
``ts >= wm >= end`` and so falls outside it (sessions merge only when they overlap, i.e.
items closer than ``gap``). So each window is emitted once, with every item it will have.

State columns, besides the common ones (see ``stateful_aggregate``): ``START`` and ``END``
(bigint ms: ``[START, END)``; a session's END is its last item's ts + gap).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, TimestampNTZType, TimestampType

from jetspark.dag.kinds import WindowParams
from worker.engine import aggregation_stages
from worker.engine.errors import EngineError
from worker.engine.expressions import user_column
from worker.engine.state_columns import PARTITION, PROCESSOR
from worker.engine.stateful_aggregate import (
    KEY,
    TS,
    Keep,
    LateItems,
    StepResult,
    column,
    emitted_and_kept,
    identity,
    merge_groups,
    per_processor,
    placed_union,
    unkept,
    with_partition,
    with_processor,
)

START = "__window_start"
END = "__window_end"
_SESSION = "__session"
_REACH = "__reach"


def window_step(
    items: DataFrame,
    state: DataFrame | None,
    params: WindowParams,
    *,
    parallelism: int,
    partition_count: int,
    wm_before: Mapping[int, int | None],
    wm_after: Callable[[], Mapping[int, int | None]],
    final: bool,
    keep: Keep = unkept,
) -> StepResult:
    """One epoch of a ``window`` vertex of ``parallelism`` processors.

    ``items`` are this epoch's routed items (with ``SLOT``); ``state`` is the previous
    epoch's ``StepResult.state`` (None at the start). ``wm_before[g]`` is the watermark
    processor g had received before this epoch, ``wm_after()[g]`` the one it receives after
    this epoch's items (None: no watermark yet), asked for once the windows are computed.
    Output rows are ``window_start``, ``window_end``, ``key`` (when keyed) and the
    aggregation fields, each computed as a single-stage aggregate over the window's items;
    processor g's rows are on partition g.

    ``keep`` is applied to the merged windows, the one frame the output and the state are
    read from: a persist there computes them once for both (the caller unpersists after
    the epoch).
    """
    keyed = params.key is not None
    frame = with_processor(items, key=params.key, parallelism=parallelism)
    processor = F.col(PROCESSOR)
    frame = frame.withColumn(TS, user_column(params.timestamp))
    frame = frame.withColumn(TS, _millis(F.col(TS), frame.schema[TS].dataType))
    before = per_processor(wm_before, processor)
    late = before.isNotNull() & (F.col(TS) < before)
    late_items = LateItems(frame, late, parallelism)
    # An item without an event time belongs to no window: dropped, as are the late ones.
    on_time = late_items.items.where(F.col(TS).isNotNull() & ~F.coalesce(late, F.lit(False)))
    if params.type == "session":
        merged = _sessions(on_time, state, params, keyed=keyed, parallelism=parallelism)
    else:
        merged = _aligned(on_time, state, params, keyed=keyed, parallelism=parallelism)
    merged = keep(with_partition(merged, keyed=keyed, partition_count=partition_count))
    after = per_processor(wm_after(), processor)
    emit = F.lit(True) if final else F.col(END) <= after
    emitted, kept = emitted_and_kept(merged, emit)
    key = [F.col(KEY).alias("key")] if keyed else []
    output = emitted.select(
        F.col(START).alias("window_start"),
        F.col(END).alias("window_end"),
        *key,
        *[aggregation_stages.finish(f, e) for f, e in params.aggregations.items()],
    )
    state_columns = [*identity(keyed=keyed), PARTITION, START, END, *params.aggregations]
    return StepResult(
        output=output,
        state=kept.select(*[column(c) for c in state_columns]),
        late=late_items,
    )


def _millis(ts: Column, data_type: DataType) -> Column:
    """Event time in ms: a number as it is, a timestamp by its epoch millis (a plain cast
    would give seconds)."""
    if isinstance(data_type, TimestampType | TimestampNTZType):
        return F.unix_millis(ts.cast("timestamp"))
    return ts.cast("bigint")


def _accumulated(on_time: DataFrame, group: list[str], params: WindowParams) -> DataFrame:
    partial = [aggregation_stages.accumulate(f, e) for f, e in params.aggregations.items()]
    return on_time.groupBy(*group).agg(*partial)


def _aligned(
    on_time: DataFrame,
    state: DataFrame | None,
    params: WindowParams,
    *,
    keyed: bool,
    parallelism: int,
) -> DataFrame:
    """Tumbling and sliding windows: [start, start + size) for start a multiple of slide."""
    size = _required(params, "size_ms")
    slide = size if params.type == "tumbling" else _required(params, "slide_ms")
    if slide == size:  # tumbling: one window per item, no array to explode
        start = F.col(TS) - F.pmod(F.col(TS), F.lit(size))
        exploded = on_time.withColumns({START: start, END: start + F.lit(size)})
    else:
        starts = _window_starts(F.col(TS), size=size, slide=slide)
        exploded = on_time.withColumn(START, F.explode(starts))
        exploded = exploded.withColumn(END, F.col(START) + F.lit(size))
    group = [*identity(keyed=keyed), START, END]
    partials = _accumulated(exploded, group, params)
    types = {f: partials.schema[f].dataType for f in params.aggregations}
    placed = placed_union(partials, state, [*group, *params.aggregations], parallelism)
    return merge_groups(placed, group=group, aggregations=params.aggregations, types=types)


def _window_starts(ts: Column, *, size: int, slide: int) -> Column:
    """The starts of every window containing ``ts``: multiples of ``slide`` in
    (ts - size, ts]. There are at most ceil(size / slide) of them."""
    last = ts - F.pmod(ts, F.lit(slide))
    count = -(-size // slide)
    candidates = F.sequence(last - F.lit((count - 1) * slide), last, F.lit(slide).cast("bigint"))
    return F.filter(candidates, lambda start: start + F.lit(size) > ts)


def _sessions(
    on_time: DataFrame,
    state: DataFrame | None,
    params: WindowParams,
    *,
    keyed: bool,
    parallelism: int,
) -> DataFrame:
    """Session windows: each distinct (processor, key, ts) opens a session [ts, ts + gap);
    sessions of a (processor, key) that overlap, new or carried, merge into one."""
    gap = _required(params, "gap_ms")
    owner = identity(keyed=keyed)
    opened = on_time.withColumn(START, F.col(TS)).withColumn(END, F.col(TS) + F.lit(gap))
    partials = _accumulated(opened, [*owner, START, END], params)
    types = {f: partials.schema[f].dataType for f in params.aggregations}
    placed = placed_union(partials, state, [*owner, START, END, *params.aggregations], parallelism)
    # Sorted by start, a session begins where no earlier interval reaches past its start;
    # the running count of beginnings numbers the merged sessions. Partitioned by (SLOT,
    # key): the frame's SLOT partitioning already satisfies it, so no row moves.
    ordered = Window.partitionBy(*owner).orderBy(START, END)
    reach = F.max(END).over(ordered.rowsBetween(Window.unboundedPreceding, -1))
    reached = placed.withColumn(_REACH, reach)
    begins = F.when(F.col(_REACH).isNull() | (F.col(START) >= F.col(_REACH)), 1).otherwise(0)
    numbered = reached.withColumn(
        _SESSION, F.sum(begins).over(ordered.rowsBetween(Window.unboundedPreceding, 0))
    ).drop(_REACH)
    bounds = [F.min(START).alias(START), F.max(END).alias(END)]
    merged = merge_groups(
        numbered,
        group=[*owner, _SESSION],
        aggregations=params.aggregations,
        types=types,
        extra=bounds,
    )
    return merged.drop(_SESSION)


def _required(params: WindowParams, name: str) -> int:
    value = getattr(params, name)
    if not isinstance(value, int):
        raise EngineError(f"a {params.type} window needs {name}")
    return value
