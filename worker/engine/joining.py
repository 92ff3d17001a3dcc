"""``hash_join`` over routed frames, once or carried across the epochs of a stream.

Processor g joins the probe items it received with the build items it received: the join
condition includes ``SLOT`` and both sides are hash-partitioned on it with P partitions, so
Spark joins them in place (a shuffled hash join that builds on the build side).

In a stream the build side is state (``join_step``): every build item read so far, kept per
processor from epoch to epoch and in the snapshots, so a probe item of a later epoch meets
the build items of the earlier ones. Priorities hold across epochs: while the build side is
bounded and not yet read to its end, the probe items wait in the state too and are joined in
the epoch that completes it; an unbounded build side is appended to, each epoch's probe items
meeting every build item read up to that epoch (its own epoch's first).

State columns: ``SLOT``, ``PROCESSOR``, ``PARTITION`` (the pid of the row's key on its edge
when that edge is partitioned, else g) and ``BUILD`` or ``PROBE``: the item as a struct.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from jetspark.dag.expressions import quote_identifier
from jetspark.dag.kinds import HashJoinParams
from jetspark.dag.model import Routing
from jetspark.dag.plan import EdgePlan
from worker.engine.expressions import user_column
from worker.engine.routing import SLOT, partition_id
from worker.engine.state_columns import PARTITION, PROCESSOR
from worker.engine.stateful_aggregate import processor_index

BUILD = "__join_build"
PROBE = "__join_probe"


def joined(build: DataFrame, probe: DataFrame, params: HashJoinParams) -> DataFrame:
    """The probe items' fields plus their build items' (the probe's winning a clash); both
    frames carry ``SLOT`` and are partitioned on it."""
    fields = [c for c in probe.columns if c != SLOT]
    extra = [c for c in build.columns if c != SLOT and c not in probe.columns]
    build = build.select(
        F.col(SLOT).alias("__build_slot"),
        user_column(params.build_key).alias("__build_key"),
        *[_col(c) for c in extra],
    )
    probe = probe.withColumn("__probe_key", user_column(params.probe_key))
    on = (F.col(SLOT) == F.col("__build_slot")) & (F.col("__probe_key") == F.col("__build_key"))
    both = probe.join(build.hint("shuffle_hash"), on, params.how)
    return both.select(*[_col(c) for c in fields], *[_col(c) for c in extra])


@dataclass
class JoinStep:
    output: DataFrame
    """The joined rows of this epoch (none while the probe items wait)."""
    state: DataFrame
    """The build items so far, and the probe items still waiting."""
    changed: bool
    """False: ``state`` is the frame carried in, as it was."""


def join_step(
    build: DataFrame,
    probe: DataFrame,
    state: DataFrame | None,
    params: HashJoinParams,
    *,
    edges: tuple[EdgePlan, EdgePlan],
    parallelism: int,
    partition_count: int,
    complete_before: bool,
    ready: bool,
    keep: Callable[[DataFrame], DataFrame] = lambda frame: frame,
    guard: Callable[[DataFrame], DataFrame] = lambda frame: frame,
) -> JoinStep:
    """One epoch of a streaming ``hash_join``.

    ``build`` and ``probe`` are this epoch's routed items (with ``SLOT``); ``state`` the
    previous epoch's ``JoinStep.state``. ``complete_before``: the build side had been read to
    its end before this epoch (it brings nothing new); ``ready``: the probe items read so far
    may be joined (the build side is complete now, or endless). ``keep`` computes the state
    of an epoch whose probe items wait (``EpochScope.checkpointed``), so they are counted;
    ``guard`` bounds the build items a processor holds, carried and new
    (``max_processor_accumulated_records``).
    """
    n = parallelism
    carried = _side(state, BUILD)
    held = _side(state, PROBE)
    kept = carried
    if kept is None or not complete_before:
        new = _packed(build, BUILD, edges[0], partition_count, n)
        kept = new if carried is None else _placed(carried.unionByName(new), n)
    build_rows = guard(_unpacked(kept, BUILD))
    if not ready:
        new_probes = _packed(probe, PROBE, edges[1], partition_count, n)
        waiting = new_probes if held is None else _placed(held.unionByName(new_probes), n)
        return JoinStep(
            output=joined(build_rows, probe, params).where(F.lit(False)),
            # Computed now: the probe items are counted as received in this epoch.
            state=keep(kept.unionByName(waiting, allowMissingColumns=True)),
            changed=True,
        )
    probes = probe if held is None else _placed(_unpacked(held, PROBE).unionByName(probe), n)
    output = joined(build_rows, probes, params)
    if state is not None and kept is carried and held is None:
        return JoinStep(output=output, state=state, changed=False)
    return JoinStep(output=output, state=kept, changed=True)


def _side(state: DataFrame | None, side: str) -> DataFrame | None:
    """The state rows of one side, packed; None when the state has none of that side."""
    if state is None or side not in state.columns:
        return None
    return state.where(F.col(side).isNotNull()).select(SLOT, PROCESSOR, PARTITION, side)


def _unpacked(packed: DataFrame, side: str) -> DataFrame:
    """Packed rows as items with their ``SLOT`` (partitioned on it as the rows are)."""
    return packed.select(SLOT, f"{side}.*")


def _placed(frame: DataFrame, parallelism: int) -> DataFrame:
    return frame.repartition(parallelism, SLOT)


def _packed(
    items: DataFrame, side: str, edge: EdgePlan, partition_count: int, parallelism: int
) -> DataFrame:
    """Items as state rows: their processor, their key's partition and the item itself."""
    fields = [c for c in items.columns if c != SLOT]
    processor = processor_index(F.col(SLOT), parallelism)
    keyed = edge.routing in (Routing.partitioned, Routing.all_to_one)
    partition = partition_id(items, edge, partition_count) if keyed else processor
    return items.select(
        SLOT,
        processor.alias(PROCESSOR),
        partition.cast("int").alias(PARTITION),
        F.struct(*[_col(c) for c in fields]).alias(side),
    )


def _col(name: str) -> Column:
    return F.col(quote_identifier(name))
