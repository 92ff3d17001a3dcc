"""What one epoch's ops see beyond their inputs: ranges, state, watermarks, outputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from worker.engine.streaming.watermarks import WatermarkTracker

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from jetspark.dag.plan import ExecutionPlan


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
    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """``sink.results`` records of this epoch, committed with it."""
    late_frames: dict[str, DataFrame] = field(default_factory=dict)
    """Per window vertex, its late items dropped this epoch per processor (``late`` column);
    read at the barrier, once the epoch's outputs are written."""
    late: dict[str, int] = field(default_factory=dict)
    """Late items dropped this epoch, per window vertex (from ``late_frames``)."""
    wm_before: dict[str, dict[int, int | None]] = field(default_factory=dict)
    """Each vertex's coalesced watermarks as the epoch began."""
    wm_after: dict[str, dict[int, int | None]] = field(default_factory=dict)
    """Each vertex's coalesced watermarks once this epoch's items have reached it."""
    job_t0_ms: int = 0
    """When the job's first epoch was planned: fixed for the job's whole life (carried in the
    planned ranges and the snapshots' offsets), so a replayed epoch's ``sink.redis_stream``
    ids, ``<job_t0_ms + epoch>-<n>``, are the lost attempt's."""

    def coalesce(self, vertex: str) -> dict[int, int | None]:
        """Coalesce the vertex's inbound watermarks now that its senders ran this epoch."""
        self.wm_before[vertex] = self.watermarks.coalesced(vertex)
        coalesced = self.watermarks.coalesce(self.plan, vertex)
        if self.final:
            parallelism = self.plan.vertex(vertex).parallelism
            coalesced = {g: FINAL_WATERMARK for g in range(parallelism)}
        self.wm_after[vertex] = coalesced
        return coalesced


FINAL_WATERMARK = 2**62
"""The watermark a finished stream sends: every window closes."""
