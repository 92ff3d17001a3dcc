"""Stateful steps of the epoch-based streaming engine: state in, state out, as DataFrames.

An epoch runs a bounded batch of new items through a stateful vertex. The vertex's state
from the previous epoch comes in as a DataFrame of *partial* aggregation results (see
``aggregation_stages.accumulate`` / ``merge``), is merged with this epoch's partials, and goes out
again, minus whatever the step emitted. Nothing here collects: each step is a plan.

Processors and slots: a routed frame's ``SLOT`` column holds ``slot_table(P)[g]`` (an int
whose Spark hash lands on partition g), not g itself. The steps keep that column in their
state, so ``repartition(P, SLOT)`` places a state row on its processor's partition as it
does an item, and add ``PROCESSOR`` = g, the index the watermark dicts are keyed by.

State columns common to every step: ``SLOT``, ``PROCESSOR`` (int g), ``PARTITION`` (int:
the murmur3 pid of the key, as ``routing.murmur3_pid`` computes it; g when not keyed),
``KEY`` (keyed steps only) and one column per aggregation, named by its field, holding the
partial result (an average's is a ``{sum, count}`` struct).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType

from jetspark.dag.expressions import quote_identifier
from jetspark.dag.kinds import AggregateParams
from worker.engine import aggregation_stages
from worker.engine.epoch_values import looked_up
from worker.engine.expressions import user_column
from worker.engine.observed import ObservedAggregates
from worker.engine.routing import SLOT, by_processor, murmur3_pid, slot_table
from worker.engine.state_columns import PARTITION, PROCESSOR

KEY = "__key"
TS = "__ts"


Keep = Callable[[DataFrame], DataFrame]


def unkept(frame: DataFrame) -> DataFrame:
    """The default ``keep``: the frame as it is (recomputed by each reader)."""
    return frame


@dataclass
class StepResult:
    """What one epoch of a stateful vertex gives back."""

    output: DataFrame
    """Rows emitted this epoch, without ``SLOT``; processor g's rows on Spark partition g."""
    state: DataFrame
    """The state to carry into the next epoch (replaces the previous one)."""
    late: LateItems | None
    """How many late items each processor dropped (windows only)."""


def column(name: str) -> Column:
    """A column by name, even one with a dot in it (aggregation fields are user-chosen)."""
    return F.col(quote_identifier(name))


def processor_index(slot: Column, parallelism: int) -> Column:
    """The processor index g of a routing ``SLOT`` value (the inverse of ``slot_table``)."""
    pairs = list(enumerate(slot_table(parallelism)))
    # A CASE rather than element_at(map): under ANSI mode a missing map key raises.
    first, *rest = pairs
    case = F.when(slot == F.lit(first[1]), F.lit(first[0]))
    for g, value in rest:
        case = case.when(slot == F.lit(value), F.lit(g))
    return case.cast("int")


def per_processor(values: Mapping[int, int | None], processor: Column) -> Column:
    """The value for each row's processor, NULL where the mapping has none. The values
    change every epoch (watermarks): they are data of the plan, not code to compile."""
    if all(v is None for v in values.values()):
        return F.lit(None).cast("bigint")
    return looked_up([values.get(g) for g in range(max(values) + 1)], processor)


def with_processor(items: DataFrame, *, key: str | None, parallelism: int) -> DataFrame:
    """Items with their processor index and (when keyed) their key in ``KEY``.

    Items that came over a fused edge may have no ``SLOT`` yet: they get their own
    partition's, as every op's input does (``by_processor``).
    """
    return by_processor(items, parallelism).withColumns(
        processor_columns(key=key, parallelism=parallelism)
    )


def processor_columns(*, key: str | None, parallelism: int) -> dict[str, Column]:
    """``PROCESSOR`` of a row placed by ``SLOT``, and its ``KEY`` when keyed, by name."""
    columns = {PROCESSOR: processor_index(F.col(SLOT), parallelism)}
    if key is not None:
        columns[KEY] = user_column(key)
    return columns


def identity(*, keyed: bool) -> list[str]:
    """The columns a state row of a step is identified by, before any window bounds."""
    return [SLOT, PROCESSOR, *([KEY] if keyed else [])]


def placed_union(
    partials: DataFrame, state: DataFrame | None, columns: Sequence[str], parallelism: int
) -> DataFrame:
    """This epoch's partials and the carried state as one frame, processor g's rows on
    partition g.

    Placed once, here: grouping (or a window function) on SLOT plus more keeps this
    partitioning, so neither the merge nor the emission that follows moves a row again.
    """
    both = partials.select(*[column(c) for c in columns])
    if state is not None:
        both = both.unionByName(state.select(*[column(c) for c in columns]))
    return both.repartition(parallelism, SLOT)


def merge_groups(
    placed: DataFrame,
    *,
    group: Sequence[str],
    aggregations: Mapping[str, str],
    types: Mapping[str, DataType],
    extra: Mapping[str, Column] | None = None,
) -> DataFrame:
    """One row per ``group`` with its partials merged (plus ``extra`` aggregates, by name).

    The merged partials are cast back to ``types`` (what this epoch's accumulate gave), so
    the state's schema stays the same from epoch to epoch: a decimal sum of sums would
    otherwise widen each time.
    """
    extra = extra or {}
    merges = [
        cast_like(aggregation_stages.merge(field, e), types[field]).alias(field)
        for field, e in aggregations.items()
    ]
    return placed.groupBy(*group).agg(*[v.alias(n) for n, v in extra.items()], *merges)


def cast_like(value: Column, data_type: DataType) -> Column:
    """``value`` cast to ``data_type``, a struct field by field: casting a whole struct
    fails on a mere nullability difference (``count`` is NOT NULL in a fresh partial)."""
    if isinstance(data_type, StructType):
        fields = [cast_like(value.getField(f.name), f.dataType).alias(f.name) for f in data_type]
        return F.struct(*fields)
    return value.cast(data_type)


def with_partition(
    frame: DataFrame, *, keyed: bool, partition_count: int, key_type: DataType | None = None
) -> DataFrame:
    """``PARTITION``: the Jet partition of the key (per group, not per item), g unkeyed.
    ``key_type``: the type of ``KEY``, when known (else read from the frame's schema)."""
    if not keyed:
        return frame.withColumn(PARTITION, F.col(PROCESSOR).cast("int"))
    if key_type is None:
        key_type = frame.schema[KEY].dataType
    pid = murmur3_pid(F.col(KEY), key_type, partition_count)
    return frame.withColumn(PARTITION, pid.cast("int"))


def emitted_and_kept(frame: DataFrame, emit: Column) -> tuple[DataFrame, DataFrame]:
    """Rows where ``emit`` holds, and the others; a NULL condition (no watermark yet) keeps."""
    emit = F.coalesce(emit, F.lit(False))
    return frame.where(emit), frame.where(~emit)


class LateItems:
    """How many late items each processor dropped this epoch, counted while Spark computes
    the step (``observed``): read them once the step's output or state has been computed.

    Counted over ``frame``'s rows where ``late`` holds, each row standing for ``weight``
    items: a window step counts its partial windows, a few rows, with the number of items
    each holds, rather than every item on its way in."""

    def __init__(
        self, frame: DataFrame, late: Column, parallelism: int, weight: Column | None = None
    ) -> None:
        counted = F.lit(1) if weight is None else weight
        flag = F.when(F.coalesce(late, F.lit(False)), counted).otherwise(F.lit(0))
        processor = F.col(PROCESSOR)
        self._late = ObservedAggregates(
            frame,
            {f"late_{g}": F.sum(F.when(processor == F.lit(g), flag)) for g in range(parallelism)},
        )
        self.frame = self._late.frame
        """``frame``, counting as it is computed: the step reads this."""

    def per_processor(self) -> dict[int, int]:
        values = self._late.values().items()
        return {int(name.removeprefix("late_")): n or 0 for name, n in values}

    def total(self) -> int:
        return sum(self.per_processor().values())


def aggregate_step(
    items: DataFrame,
    state: DataFrame | None,
    params: AggregateParams,
    *,
    parallelism: int,
    partition_count: int,
    final: bool,
    keep: Keep = unkept,
) -> StepResult:
    """One epoch of a streaming ``aggregate``: partial results per (processor, key) carried
    in ``state`` and emitted only when ``final`` (the end of the stream; the state is then
    empty). The output equals the batch ``aggregate`` of every epoch's items at once: a
    ``single`` stage emits finished values, ``accumulate`` emits partial results and
    ``combine`` merges the partial results it receives. Without a key and with one
    processor, the final output is one row even when no item ever arrived, as in batch.
    ``keep`` is applied to the merged groups, as in ``windowing.window_step``.
    """
    keyed = params.key is not None
    frame = with_processor(items, key=params.key, parallelism=parallelism)
    group = identity(keyed=keyed)
    if params.stage == "combine":
        partial = [aggregation_stages.merge(f, e) for f, e in params.aggregations.items()]
    else:
        partial = [aggregation_stages.accumulate(f, e) for f, e in params.aggregations.items()]
    partials = frame.groupBy(*group).agg(*partial)
    types = {field: partials.schema[field].dataType for field in params.aggregations}
    placed = placed_union(partials, state, [*group, *params.aggregations], parallelism)
    merged = merge_groups(placed, group=group, aggregations=params.aggregations, types=types)
    merged = keep(with_partition(merged, keyed=keyed, partition_count=partition_count))
    state_columns = [*group, PARTITION, *params.aggregations]
    finished = _finished(params)
    if not final:
        return StepResult(
            output=merged.where(F.lit(False)).select(*finished),
            state=merged.select(*[column(c) for c in state_columns]),
            late=None,
        )
    empty_state = merged.where(F.lit(False)).select(*[column(c) for c in state_columns])
    if not keyed and parallelism == 1:
        return StepResult(_global(merged, params), empty_state, late=None)
    return StepResult(merged.select(*finished), empty_state, late=None)


def _finished(params: AggregateParams) -> list[Column]:
    key = [] if params.key is None else [F.col(KEY).alias("key")]
    if params.stage == "accumulate":
        return [*key, *[column(f) for f in params.aggregations]]
    return [*key, *[aggregation_stages.finish(f, e) for f, e in params.aggregations.items()]]


def _global(merged: DataFrame, params: AggregateParams) -> DataFrame:
    """One processor without a key: a global aggregate, so no input still gives one row
    (with a count of 0, where merging no partial counts would give NULL)."""
    once = merged.agg(*[aggregation_stages.merge(f, e) for f, e in params.aggregations.items()])
    columns = _finished(params)
    values = [
        F.coalesce(column, F.lit(0)).alias(field)
        if aggregation_stages.counts(expression)
        else column
        for column, (field, expression) in zip(columns, params.aggregations.items(), strict=True)
    ]
    return once.select(*values)
