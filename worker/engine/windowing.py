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
from worker.engine.observed import ObservedAggregates
from worker.engine.routing import SLOT, by_processor
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
    processor_columns,
    unkept,
    with_partition,
)

START = "__window_start"
END = "__window_end"
_SESSION = "__session"
_REACH = "__reach"
_LATE = "__late"
_ITEMS = "__items"


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
    frame = by_processor(items, parallelism).withColumn(TS, user_column(params.timestamp))
    schema = frame.schema
    owner = processor_columns(key=params.key, parallelism=parallelism)
    ts = _millis(F.col(TS), schema[TS].dataType)
    before = per_processor(wm_before, owner[PROCESSOR])
    late = F.coalesce(before.isNotNull() & (ts < before), F.lit(False))
    # A late item keeps its place in the step, its fields NULL, to be counted where its
    # processor's partial windows are (a few rows) rather than on its own: it opens no
    # window, and nothing of it reaches an aggregation (whose expression it might fail).
    fields = [f.name for f in schema.fields if f.name not in (SLOT, TS)]
    frame = frame.select(
        SLOT,
        *[column.alias(name) for name, column in owner.items()],
        ts.alias(TS),
        late.alias(_LATE),
        *[F.when(~late, column(f)).alias(f) for f in fields],
    )
    window = _sessions if params.type == "session" else _aligned
    merged, late_items, key_type = window(
        frame, state, params, keyed=keyed, parallelism=parallelism
    )
    # Each processor's earliest window end, observed as the windows are computed: an epoch
    # that closes none (most of them, when epochs are shorter than windows) has no output,
    # so the vertices downstream get an empty plan and run no Spark task for it.
    ends = ObservedAggregates(
        with_partition(merged, keyed=keyed, partition_count=partition_count, key_type=key_type),
        {f"end_{g}": F.min(F.when(F.col(PROCESSOR) == g, F.col(END))) for g in range(parallelism)},
    )
    merged = keep(ends.frame)
    marks, earliest = wm_after(), ends.values()
    if final:
        emit = F.lit(True)
    elif closes({g: earliest[f"end_{g}"] for g in range(parallelism)}, marks):
        emit = F.col(END) <= per_processor(marks, F.col(PROCESSOR))
    else:
        emit = F.lit(False)  # Spark prunes the output to an empty relation
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


def closes(ends: Mapping[int, int | None], marks: Mapping[int, int | None]) -> bool:
    """Does processor g's watermark (``marks[g]``) reach its earliest window end
    (``ends[g]``; None or missing: it has no window)?"""
    return any(
        wm is not None and (end := ends.get(g)) is not None and wm >= end for g, wm in marks.items()
    )


Windowed = tuple[DataFrame, LateItems, DataType | None]
"""The merged windows, the late items counted on the way, and the key's type (keyed)."""


def _millis(ts: Column, data_type: DataType) -> Column:
    """Event time in ms: a number as it is, a timestamp by its epoch millis (a plain cast
    would give seconds)."""
    if isinstance(data_type, TimestampType | TimestampNTZType):
        return F.unix_millis(ts.cast("timestamp"))
    return ts.cast("bigint")


def _partials(
    windowed: DataFrame, group: list[str], params: WindowParams, parallelism: int
) -> tuple[DataFrame, LateItems, dict[str, DataType], DataType | None]:
    """This epoch's partial aggregates per ``group`` (processor, key, window), the late
    items counted on the way, the partials' types and the key's.

    A late item (``_LATE``) has no window (``START`` is NULL), nor has an item without an
    event time: each such row is grouped with its kind, its groups counted as late or not
    and dropped."""
    partial = [aggregation_stages.accumulate(f, e) for f, e in params.aggregations.items()]
    counted = F.count(F.lit(1)).alias(_ITEMS)
    partials = windowed.groupBy(*group, _LATE).agg(*partial, counted)
    late = LateItems(partials, F.col(_LATE), parallelism, weight=F.col(_ITEMS))
    schema = partials.schema
    types = {f: schema[f].dataType for f in params.aggregations}
    key_type = schema[KEY].dataType if KEY in group else None
    return late.frame.where(F.col(START).isNotNull()), late, types, key_type


def _aligned(
    frame: DataFrame,
    state: DataFrame | None,
    params: WindowParams,
    *,
    keyed: bool,
    parallelism: int,
) -> Windowed:
    """Tumbling and sliding windows: [start, start + size) for start a multiple of slide."""
    size = _required(params, "size_ms")
    slide = size if params.type == "tumbling" else _required(params, "slide_ms")
    on_time = ~F.col(_LATE)
    if slide == size:  # tumbling: one window per item, no array to explode
        start = F.when(on_time, F.col(TS) - F.pmod(F.col(TS), F.lit(size)))
        windowed = frame.withColumns({START: start, END: start + F.lit(size)})
    else:  # a late item (or one without a time) keeps one row, without a window
        starts = F.when(on_time, _window_starts(F.col(TS), size=size, slide=slide))
        windowed = frame.withColumn(START, F.explode_outer(starts))
        windowed = windowed.withColumn(END, F.col(START) + F.lit(size))
    group = [*identity(keyed=keyed), START, END]
    partials, late, types, key_type = _partials(windowed, group, params, parallelism)
    placed = placed_union(partials, state, [*group, *params.aggregations], parallelism)
    merged = merge_groups(placed, group=group, aggregations=params.aggregations, types=types)
    return merged, late, key_type


def _window_starts(ts: Column, *, size: int, slide: int) -> Column:
    """The starts of every window containing ``ts``: multiples of ``slide`` in
    (ts - size, ts]. There are at most ceil(size / slide) of them."""
    last = ts - F.pmod(ts, F.lit(slide))
    count = -(-size // slide)
    candidates = F.sequence(last - F.lit((count - 1) * slide), last, F.lit(slide).cast("bigint"))
    return F.filter(candidates, lambda start: start + F.lit(size) > ts)


def _sessions(
    frame: DataFrame,
    state: DataFrame | None,
    params: WindowParams,
    *,
    keyed: bool,
    parallelism: int,
) -> Windowed:
    """Session windows: each distinct (processor, key, ts) opens a session [ts, ts + gap);
    sessions of a (processor, key) that overlap, new or carried, merge into one."""
    gap = _required(params, "gap_ms")
    owner = identity(keyed=keyed)
    start = F.when(~F.col(_LATE), F.col(TS))
    opened = frame.withColumns({START: start, END: start + F.lit(gap)})
    partials, late, types, key_type = _partials(opened, [*owner, START, END], params, parallelism)
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
    merged = merge_groups(
        numbered,
        group=[*owner, _SESSION],
        aggregations=params.aggregations,
        types=types,
        extra={START: F.min(START), END: F.max(END)},
    )
    return merged.drop(_SESSION), late, key_type


def _required(params: WindowParams, name: str) -> int:
    value = getattr(params, name)
    if not isinstance(value, int):
        raise EngineError(f"a {params.type} window needs {name}")
    return value
