"""``aggregate``: grouped aggregation, once over bounded input or carried across epochs."""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructField

from jetspark.dag import kinds as p
from jetspark.dag.kinds import PROCESSORS
from jetspark.dag.model import Routing
from jetspark.dag.plan import Exchange
from worker.engine import aggregation_stages
from worker.engine.accumulation import bounded
from worker.engine.counting import ITEMS, items_column
from worker.engine.expressions import user_column
from worker.engine.ops.base import Op, OpContext, params_of
from worker.engine.routing import (
    SLOT,
    TARGET_PROCESSOR,
    by_processor,
    candidates,
    partition_id,
    route,
    sender_member,
    targeted,
    with_slot,
    without_slot,
)
from worker.engine.stateful_aggregate import aggregate_step


class AggregateOp(Op):
    """Each processor aggregates the items routed to it: a group is (processor, key).

    Over an exchange the op routes its own input (``places_own_input``) so that partial
    groups travel instead of items, with Spark's partial aggregation before the shuffle:

    - partitioned on the aggregation key (or all-to-one): the target processor is a function
      of the key and, on a local edge, of the sender's member, so the op groups by
      (member, key) first and computes each group's processor afterwards, once per group;
    - otherwise each item gets its target ``SLOT`` and the op groups by (slot, key).

    Either way each processor's groups are then placed on its partition: the groups and
    where they end up are those of aggregating after moving every item. The placement is
    left out when no outbound edge can tell where a row is (``_placed_downstream``). Over a
    fused edge the frame is aggregated where it is, and so are the items of an aggregate
    (already one per group: routed first, then aggregated in place, one exchange instead of
    two). Over a ``pregrouped`` edge a combine's rows are one per key already: each is
    finished where it is and routed only if a consumer can tell (``_finished``). Without a
    key and with P > 1, every processor that received items emits its own aggregate, as
    Jet's non-keyed aggregation does. The op counts its own input
    (``counts_own_input``) in its groups, keeping Spark's code generation across the items.
    """

    places_own_input = True
    counts_own_input = True

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.AggregateParams)
        if ctx.epoch is not None and not (ctx.epoch.final and ctx.epoch.epoch == 1):
            return self.in_epochs(ctx, params)
        stage = aggregation_stages.STAGES[params.stage]
        columns = [stage(field, e) for field, e in params.aggregations.items()]
        counted = ctx.count_input or (lambda groups: groups)
        if ctx.count_input is not None:
            columns.append(items_column())
        n, edge, frame = ctx.vertex.parallelism, ctx.inbound[0], ctx.only_input
        if _finishes_partials(ctx):
            return _finished(ctx, params)
        if params.key is None and n == 1:
            return counted(frame.agg(*columns))  # one processor: a row even for no input
        sender = ctx.senders[0]
        routed = edge.exchange is not Exchange.fused and sender.processor == "aggregate"
        if routed:  # few items, one per group already: no partial aggregation to gain
            frame = route(frame, edge, sender, ctx.vertex, ctx.partition_count)
        if routed or edge.exchange is Exchange.fused:
            # No exchange: Spark's HashPartitioning(SLOT) satisfies the grouping in place.
            keys = [F.col(SLOT), *_key(params)]
            grouped = counted(by_processor(frame, n).groupBy(*keys).agg(*columns))
            return _held(ctx, grouped).drop(SLOT)
        if params.key is not None and (
            edge.routing is Routing.all_to_one
            or (edge.routing is Routing.partitioned and edge.key == params.key)
        ):
            # the sender's member matters on a local edge from several members (one: member 0)
            local = not edge.distributed and sender.parallelism > sender.local_parallelism
            member = [sender_member(sender).alias("__member")] if local else []
            grouped = counted(without_slot(frame).groupBy(*member, *_key(params)).agg(*columns))
            if not _placing(ctx):  # where a group sits is lost downstream: no slot to compute
                return grouped.drop("__member") if local else grouped
            first, width = candidates(edge, ctx.vertex, F.col("__member") if local else F.lit(0))
            on_key = edge.model_copy(update={"key": "`key`"})
            pid = partition_id(grouped, on_key, ctx.partition_count)
            slotted = with_slot(grouped, first + F.pmod(pid, F.lit(width)), n)
            return _placed(ctx, slotted, n).drop(SLOT, "__member")
        items = targeted(frame, edge, sender, ctx.vertex, ctx.partition_count)
        keys = [F.col(SLOT), *_key(params)]
        return _placed(ctx, counted(items.groupBy(*keys).agg(*columns)), n).drop(SLOT)

    def preserves_count(self, ctx: OpContext) -> bool:
        """A combine over ``pregrouped`` partials finishes each where it is (``_finished``)."""
        return _finishes_partials(ctx)

    def in_epochs(self, ctx: OpContext, params: p.AggregateParams) -> DataFrame:
        """Streaming: partial results carried from epoch to epoch, emitted at the end."""
        assert ctx.epoch is not None
        name, edge, items = ctx.vertex.name, ctx.inbound[0], ctx.only_input
        if edge.exchange is not Exchange.fused:  # partial groups travel, as in a window
            items = targeted(items, edge, ctx.senders[0], ctx.vertex, ctx.partition_count)
        step = aggregate_step(
            items,
            ctx.epoch.state_in.get(name),
            params,
            parallelism=ctx.vertex.parallelism,
            partition_count=ctx.partition_count,
            final=ctx.epoch.final,
            keep=held_then_kept(ctx),
        )
        ctx.epoch.state_out[name] = step.state
        return step.output


def _finishes_partials(ctx: OpContext) -> bool:
    """Whether a batch combine's rows are its keys' only partials (``_finished``)."""
    return ctx.epoch is None and ctx.inbound[0].pregrouped


def _finished(ctx: OpContext, params: p.AggregateParams) -> DataFrame:
    """A combine whose rows are its keys' only partial results (``EdgePlan.pregrouped``):
    each finished where it is, as merging a single partial would, cast to the type merging
    gives. Its processor is that of the edge's routing; the rows are moved there only if a
    consumer can tell, and handed to a ``sink.results`` over a fused edge with that processor
    named (``TARGET_PROCESSOR``) instead of moved: one exchange less (a Spark job less)."""
    edge, n = ctx.inbound[0], ctx.vertex.parallelism
    partials = without_slot(ctx.only_input)
    merged = _merged_fields(partials, params.aggregations)
    if ctx.count_input is not None:  # one item per row: the rows are counted as they pass
        partials = ctx.count_input(partials.withColumn(ITEMS, F.lit(1)))
    finished = [
        _like(aggregation_stages.finish(f, e), merged[f]) for f, e in params.aggregations.items()
    ]
    rows = partials.select(F.col("key"), *finished)
    in_order = ctx.max_records is None and _collected_in_order(ctx)
    if not in_order and not _placing(ctx):
        return rows  # nothing downstream can tell a row's processor
    first, width = candidates(edge, ctx.vertex, F.lit(0))  # one member: its rows are member 0's
    processor = first + F.pmod(partition_id(rows, edge, ctx.partition_count), F.lit(width))
    if in_order:
        return rows.withColumn(TARGET_PROCESSOR, processor.cast("int"))
    return _placed(ctx, with_slot(rows, processor, n), n).drop(SLOT)


def _merged_fields(partials: DataFrame, aggregations: dict[str, str]) -> dict[str, StructField]:
    """Each field as the general path's merge would give it (and where it would fail): its
    partial's type where merging keeps it (``aggregation_stages.merged_type``), else as Spark
    analyses the merge (it runs nothing); one analysis less per job in the common case."""
    fields: dict[str, StructField] = {}
    schema = partials.schema
    for field, expression in aggregations.items():
        if field not in schema.names:
            continue  # Spark's analysis names what is missing
        same = aggregation_stages.merged_type(expression, schema[field].dataType)
        if same is not None:
            fields[field] = StructField(field, same, nullable=True)
    rest = [(f, e) for f, e in aggregations.items() if f not in fields]
    if rest:
        merged = partials.groupBy(F.col("key")).agg(
            *[aggregation_stages.combine(f, e) for f, e in rest]
        )
        fields.update({f: merged.schema[f] for f, _ in rest})
    return fields


def _like(column: Column, field: StructField) -> Column:
    """``column`` of ``field``'s type, nullable if it is (a merge's sum may be NULL)."""
    typed = column.cast(field.dataType).alias(field.name)
    return F.when(typed.isNotNull(), typed).alias(field.name) if field.nullable else typed


def _collected_in_order(ctx: OpContext) -> bool:
    """Whether the one consumer is a ``sink.results`` over a fused edge: it reads a row's
    processor only for the order of the records and its cap per processor, both of which it
    can take from ``TARGET_PROCESSOR``."""
    if len(ctx.outbound) != 1 or len(ctx.receivers) != 1:
        return False
    return ctx.outbound[0].exchange is Exchange.fused and ctx.receivers[0].processor == (
        "sink.results"
    )


def _placed(ctx: OpContext, slotted: DataFrame, n: int) -> DataFrame:
    """Each row on the partition its ``SLOT`` names, unless ``_placing`` says not to."""
    if not _placing(ctx):
        return slotted
    return _held(ctx, slotted.repartition(n, SLOT))


def _placing(ctx: OpContext) -> bool:
    """Whether the groups are moved to their processors' partitions: when an outbound edge
    can tell where a row is, or a limit on what a processor holds is checked there."""
    return _placed_downstream(ctx) or ctx.max_records is not None


def _held(ctx: OpContext, groups: DataFrame) -> DataFrame:
    """Each processor's groups (on its partition), within ``max_processor_accumulated_records``."""
    return bounded(groups, ctx.max_records, ctx.vertex.name, "groups")


def held_then_kept(ctx: OpContext) -> Callable[[DataFrame], DataFrame]:
    """An epoch step's ``keep`` of its merged state (processor g's rows on partition g):
    checked against ``max_processor_accumulated_records``, then checkpointed."""
    assert ctx.epoch is not None
    epoch, name = ctx.epoch, ctx.vertex.name

    def keep(state: DataFrame) -> DataFrame:
        return epoch.checkpointed(name, bounded(state, ctx.max_records, name, "groups"))

    return keep


def _placed_downstream(ctx: OpContext) -> bool:
    """Whether a consumer of the output can tell which partition a row is in.

    A distributed edge that is partitioned, all-to-one or broadcast routes each item by its
    content alone (no sender member, no sender row index), so where the row was is lost; a
    ``placement_blind`` receiver (``sink.jdbc``) makes the same of its rows wherever they are.
    """
    return not all(
        (e.exchange is not Exchange.fused and e.distributed and e.routing is not Routing.unicast)
        or PROCESSORS[receiver.processor].placement_blind  # a plan names known kinds only
        for e, receiver in zip(ctx.outbound, ctx.receivers, strict=True)
    )


def _key(params: p.AggregateParams) -> list[Column]:
    return [] if params.key is None else [user_column(params.key).alias("key")]
