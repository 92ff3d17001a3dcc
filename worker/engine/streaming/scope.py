"""What one epoch's ops see beyond their inputs: ranges, state, watermarks, outputs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from worker.engine.streaming.watermarks import WatermarkTracker

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from jetspark.dag.plan import ExecutionPlan
    from worker.engine.stateful_aggregate import LateItems


@dataclass
class EpochScope:
    """One epoch of a run: set up by the epoch loop, read and filled by the ops."""

    epoch: int
    final: bool
    """The stream ends with this epoch: stateful ops emit everything they hold."""
    now_ms: int
    plan: ExecutionPlan
    ranges: dict[str, dict[str, Any]]
    """Per source vertex, what it reads this epoch (see ``sources``)."""
    watermarks: WatermarkTracker
    state_in: dict[str, DataFrame] = field(default_factory=dict)
    """Per stateful vertex, the state the previous epoch left (absent in the first)."""
    state_out: dict[str, DataFrame] = field(default_factory=dict)
    """Per stateful vertex, the state to carry to the next epoch."""
    state_ready: set[str] = field(default_factory=set)
    """Stateful vertices whose ``state_out`` already reads a checkpoint (``checkpointed``):
    carried as it is, with no lineage to cut."""
    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """``sink.results`` records of this epoch, committed with it."""
    late_items: dict[str, LateItems] = field(default_factory=dict)
    """Per window vertex, its late items dropped this epoch; read at the barrier, once the
    epoch's outputs and state are computed."""
    wm_before: dict[str, dict[int, int | None]] = field(default_factory=dict)
    """Each vertex's coalesced watermarks as the epoch began."""
    wm_after: dict[str, dict[int, int | None]] = field(default_factory=dict)
    """Each vertex's coalesced watermarks once this epoch's items have reached it."""
    deferred: list[Callable[[], None]] = field(default_factory=list)
    """Watermark observations waiting for the Spark job that computes their items (see
    ``defer``)."""
    job_t0_ms: int = 0
    """When the job's first epoch was planned: fixed for the job's whole life (carried in the
    planned ranges and the snapshots' offsets), so a replayed epoch's ``sink.redis_stream``
    ids, ``<job_t0_ms + epoch>-<n>``, are the lost attempt's."""
    done_before: frozenset[str] = frozenset()
    """Source vertices read to their end before this epoch."""
    done_after: frozenset[str] = frozenset()
    """Source vertices read to their end once this epoch's ranges are read."""
    endless: frozenset[str] = frozenset()
    """Source vertices that are never read to their end (``Op.endless``)."""
    replayed: bool = False
    """A lost attempt planned this epoch (exactly-once): it may have written some of its
    output already."""

    def sink_mark(self, vertex: str) -> dict[str, Any] | None:
        """What sink ``vertex`` noted in the epoch's plan (``Op.epoch_mark``), if anything."""
        marks: dict[str, dict[str, Any]] = self.ranges.get(SINK_MARKS, {})
        return marks.get(vertex)

    def upstream_sources(self, vertex: str) -> set[str]:
        """The source vertices (no inbound edge) whose items reach ``vertex`` (itself, if it
        is one)."""
        seen, todo = {vertex}, [vertex]
        while todo:
            for edge in self.plan.inbound(todo.pop()):
                if edge.source not in seen:
                    seen.add(edge.source)
                    todo.append(edge.source)
        return {name for name in seen if not self.plan.inbound(name)}

    def complete(self, sources: set[str]) -> tuple[bool, bool]:
        """Whether ``sources`` were all read to their end (before, after) this epoch."""
        return self.done_before >= sources, self.final or self.done_after >= sources

    def checkpointed(self, vertex: str, frame: DataFrame) -> DataFrame:
        """``frame`` computed now and kept without its lineage: the merged groups a stateful
        vertex reads both its output and its state from. One Spark job, where a persist
        would take one for the output and another to checkpoint the state at the barrier."""
        kept = frame.localCheckpoint(eager=True)
        self.state_ready.add(vertex)
        return kept

    def defer(self, observe: Callable[[], None]) -> None:
        """Observe watermarks once they are needed (``resolve``): by then a Spark job that
        computes the items anyway has usually observed their timestamps on its way."""
        self.deferred.append(observe)

    def resolve(self) -> None:
        """Apply the deferred observations, in the order they were made."""
        while self.deferred:
            self.deferred.pop(0)()

    def coalesce(self, vertex: str) -> dict[int, int | None]:
        """Coalesce the vertex's inbound watermarks now that its senders ran this epoch."""
        self.resolve()
        self.wm_before[vertex] = self.watermarks.coalesced(vertex)
        coalesced = self.watermarks.coalesce(self.plan, vertex)
        if self.final:
            parallelism = self.plan.vertex(vertex).parallelism
            coalesced = {g: FINAL_WATERMARK for g in range(parallelism)}
        self.wm_after[vertex] = coalesced
        return coalesced


SINK_MARKS = "__sink_marks"
"""The key of the sinks' marks among an exactly-once epoch's planned ranges."""

FINAL_WATERMARK = 2**62
"""The watermark a finished stream sends: every window closes."""
