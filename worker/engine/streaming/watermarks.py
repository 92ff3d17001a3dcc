"""Watermarks per processor, coalesced as the seeds rule, kept on the driver between vertices.

- ``insert_watermarks`` processor g forwards ``top observed timestamp - allowed lag`` whenever
  that grows; a processor that saw no item for ``idle_timeout_ms`` is idle.
- Every edge carries watermarks whatever its routing: processor h of a vertex hears every
  upstream processor connected to it (all of them over a distributed edge, those on its own
  member over a local one).
- h's coalesced watermark is the minimum over its non-idle upstream processors, and it never
  goes back: an input that speaks again below it holds the minimum until it catches up.
  When every upstream processor is idle, h is idle too and its watermark stays.
- A processor stream must increase strictly: forwarding a watermark not above the last one
  fails the job naming the vertex.
- A source that reads several partitions of its own (``source.kafka``) keeps a watermark per
  partition and coalesces them by the same rules (``observe_partitions``): its processor's
  watermark is the minimum over its non-idle partitions, and it is idle when they all are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jetspark.dag.plan import ExecutionPlan, upstream_of


class WatermarkNotIncreasing(Exception):
    """A processor emitted a watermark not above its previous one."""

    error_type = "WatermarkNotIncreasing"

    def __init__(self, vertex: str, processor: int, previous: int, offered: int) -> None:
        self.vertex = vertex
        super().__init__(
            f"processor {processor} emitted watermark {offered} after {previous}: "
            "watermarks must increase strictly"
        )


@dataclass
class ProcessorMarks:
    """One processor's watermark state (all times in ms)."""

    top_observed: int | None = None
    coalesced: int | None = None
    forwarded: int | None = None
    idle: bool = False
    last_item_ms: int | None = None


@dataclass
class PartitionMarks:
    """One partition of a source's input (a Kafka partition): its greatest event time seen,
    when it last had records (the planning time of that epoch, in ms) and whether it is
    idle."""

    top: int | None = None
    last_ms: int | None = None
    idle: bool = False


PARTITIONS = "#partitions"
"""The key of the partitions' marks in ``to_json`` (no vertex has that name: a name is
letters, digits and ``_``)."""


@dataclass
class WatermarkTracker:
    """Every processor's marks, by vertex name; JSON round-trips through snapshots."""

    marks: dict[str, list[ProcessorMarks]] = field(default_factory=dict)
    partitions: dict[str, dict[str, PartitionMarks]] = field(default_factory=dict)
    """Per source vertex that reads partitions, each partition's marks, by its name: kept in
    the snapshots with the processors' marks, so a restore resumes them."""

    @classmethod
    def for_plan(cls, plan: ExecutionPlan) -> WatermarkTracker:
        return cls(
            {v.name: [ProcessorMarks() for _ in range(v.parallelism)] for v in plan.vertices}
        )

    def of(self, vertex: str) -> list[ProcessorMarks]:
        return self.marks[vertex]

    def coalesced(self, vertex: str) -> dict[int, int | None]:
        return {g: m.coalesced for g, m in enumerate(self.marks[vertex])}

    # --- updates -------------------------------------------------------------------------

    def forward(self, vertex: str, processor: int, watermark: int) -> None:
        """Processor ``processor`` of ``vertex`` emits ``watermark`` downstream."""
        marks = self.marks[vertex][processor]
        if marks.forwarded is not None and watermark <= marks.forwarded:
            raise WatermarkNotIncreasing(vertex, processor, marks.forwarded, watermark)
        marks.forwarded = watermark

    def observe_events(
        self,
        vertex: str,
        top_by_processor: dict[int, int],
        *,
        allowed_lag_ms: int,
        idle_timeout_ms: int | None,
        now_ms: int,
        max_lull_ms: int | None = None,
    ) -> None:
        """An ``insert_watermarks`` vertex saw items whose greatest timestamps are given.

        A processor quiet for ``max_lull_ms`` or more (a lull) advances its watermark with
        the wall clock: ``top observed + time since its last item - allowed lag``, as the
        seeds' watermark inserter does in ``tryProcess``; it forwards watermarks, so it is
        not idle."""
        for g, marks in enumerate(self.marks[vertex]):
            top = top_by_processor.get(g)
            if top is not None:
                marks.last_item_ms = now_ms
                marks.idle = False
                if marks.top_observed is None or top > marks.top_observed:
                    marks.top_observed = top
            elif marks.last_item_ms is None:
                marks.last_item_ms = now_ms  # the idle clock starts with the job
            if idle_timeout_ms is not None and top is None:
                quiet_since = now_ms if marks.last_item_ms is None else marks.last_item_ms
                marks.idle = now_ms - quiet_since >= idle_timeout_ms
            if marks.top_observed is not None:
                candidate = marks.top_observed - allowed_lag_ms
                quiet_ms = now_ms - (now_ms if marks.last_item_ms is None else marks.last_item_ms)
                if top is None and max_lull_ms is not None and quiet_ms >= max_lull_ms:
                    candidate += quiet_ms
                    marks.idle = False
                if marks.forwarded is None or candidate > marks.forwarded:
                    self.forward(vertex, g, candidate)
                marks.coalesced = marks.forwarded

    def observe_partitions(
        self,
        vertex: str,
        owners: dict[str, int],
        tops: dict[str, int],
        *,
        allowed_lag_ms: int,
        idle_timeout_ms: int,
        now_ms: int,
    ) -> None:
        """A source read partitions this epoch: ``owners`` names each partition's processor,
        ``tops`` the greatest event time of the records each partition gave (none: no record).

        A partition's watermark is its greatest event time seen minus ``allowed_lag_ms``; a
        partition without records for ``idle_timeout_ms`` (its clock starts when the source
        first sees it) is idle until it has records again. A processor forwards the minimum
        over its non-idle partitions when that grows (a partition without any record yet
        holds it back), and never goes back: a partition that wakes below it holds the
        minimum until it catches up. A processor whose partitions are all idle, or that has
        none, is idle; as its last partitions become idle it forwards the greatest of their
        watermarks first (Jet's ``EventTimeMapper``: with the epochs' clock, partitions
        usually become idle together, and the last minimum would be stale)."""
        parts = self.partitions.setdefault(vertex, {})
        for name in owners:
            marks = parts.setdefault(name, PartitionMarks())
            top = tops.get(name)
            if top is not None:
                marks.last_ms, marks.idle = now_ms, False
                marks.top = top if marks.top is None else max(marks.top, top)
                continue
            if marks.last_ms is None:
                marks.last_ms = now_ms  # the idle clock starts when the partition is seen
            marks.idle = now_ms - marks.last_ms >= idle_timeout_ms
        for g, processor in enumerate(self.marks[vertex]):
            owned = [parts[name] for name, owner in owners.items() if owner == g]
            active = [m for m in owned if not m.idle]
            processor.idle = not active
            seen = [m.top for m in owned if m.top is not None]
            if seen:
                processor.top_observed = max(seen)
            stamps = [m.last_ms for m in owned if m.last_ms is not None]
            if stamps:
                processor.last_item_ms = max(stamps)
            # All idle: the greatest watermark first, as Jet's ``EventTimeMapper`` does.
            greatest = max(seen) if seen else None
            lowest = min_or_none([m.top for m in active]) if active else greatest
            if lowest is not None:
                candidate = lowest - allowed_lag_ms
                if processor.forwarded is None or candidate > processor.forwarded:
                    self.forward(vertex, g, candidate)
            processor.coalesced = processor.forwarded

    def coalesce(self, plan: ExecutionPlan, vertex: str) -> dict[int, int | None]:
        """Each processor of ``vertex`` takes the minimum of its non-idle upstream marks."""
        receiver = plan.vertex(vertex)
        for h, marks in enumerate(self.marks[vertex]):
            heard: list[ProcessorMarks] = []
            for edge in plan.inbound(vertex):
                sender = plan.vertex(edge.source)
                heard += [
                    self.marks[edge.source][g] for g in upstream_of(edge, sender, receiver, h)
                ]
            active = [m for m in heard if not m.idle]
            marks.idle = bool(heard) and not active
            if not active:
                continue
            lowest = min_or_none([m.forwarded for m in active])
            if lowest is not None and (marks.coalesced is None or lowest > marks.coalesced):
                marks.coalesced = lowest
        return self.coalesced(vertex)

    def pass_through(self, vertex: str) -> None:
        """A vertex without its own watermark logic forwards what it coalesced."""
        for g, marks in enumerate(self.marks[vertex]):
            if marks.coalesced is not None and (
                marks.forwarded is None or marks.coalesced > marks.forwarded
            ):
                self.forward(vertex, g, marks.coalesced)

    def flush(self) -> None:
        """The stream ended: no watermark is held back any more (the seeds' final watermark)."""
        for marks_list in self.marks.values():
            for marks in marks_list:
                marks.idle = False

    # --- snapshots -------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            name: [vars(m).copy() for m in marks_list] for name, marks_list in self.marks.items()
        }
        if self.partitions:
            data[PARTITIONS] = {
                vertex: {name: vars(m).copy() for name, m in parts.items()}
                for vertex, parts in self.partitions.items()
            }
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], plan: ExecutionPlan) -> WatermarkTracker:
        """Restore; a vertex whose parallelism changed gives each new processor the lowest
        old marks, so no window is emitted twice and no item is wrongly late."""
        tracker = cls.for_plan(plan)
        for vertex in plan.vertices:
            saved = [ProcessorMarks(**m) for m in data.get(vertex.name, [])]
            if len(saved) == vertex.parallelism:
                tracker.marks[vertex.name] = saved
            elif saved:
                lowest = ProcessorMarks(
                    top_observed=min_or_none([m.top_observed for m in saved]),
                    coalesced=min_or_none([m.coalesced for m in saved]),
                    forwarded=min_or_none([m.forwarded for m in saved]),
                )
                tracker.marks[vertex.name] = [
                    ProcessorMarks(**vars(lowest)) for _ in range(vertex.parallelism)
                ]
        # Partitions' marks do not depend on the parallelism: each goes on as it was.
        names = {vertex.name for vertex in plan.vertices}
        for vertex_name, parts in data.get(PARTITIONS, {}).items():
            if vertex_name in names:
                tracker.partitions[vertex_name] = {
                    name: PartitionMarks(**m) for name, m in parts.items()
                }
        return tracker


def min_or_none(values: list[int | None]) -> int | None:
    """The minimum, or None when any value is None (a processor without a watermark yet)."""
    if not values or any(v is None for v in values):
        return None
    return min(v for v in values if v is not None)
