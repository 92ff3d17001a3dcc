"""Who holds a vertex's watermark back: its metrics document read along the execution plan.

A processor's coalesced watermark is the minimum of what the upstream processors connected
to it last forwarded, idle ones left out (Jet's coalescing). On a distributed edge every
upstream processor feeds every downstream one; on a local edge only those on the same member
(processor g is on member ``g // local_parallelism``). So for each processor of a vertex,
the holder is the non-idle upstream processor connected to it with the lowest
``last_forwarded_wm`` (one that forwarded none yet holds back most); an input whose connected
upstream processors are all idle is named as idle. The vertex's holder is the lowest of
its processors' holders. An upstream vertex that reports no processors
(a built-in) stands for itself, with ``processor: null``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from jetspark.dag.plan import EdgePlan, ExecutionPlan, VertexPlan, upstream_of
from jetspark.metrics.names import BackpressureLevel
from jetspark.metrics.report import JobMetrics, VertexMetrics, wall_clock_lag


class Holder(BaseModel):
    """The upstream processor holding a watermark back."""

    idle: Literal[False] = False
    vertex: str
    processor: int | None = Field(description="its global index; null: the vertex as a whole")
    member: int | None = None
    last_forwarded_wm: int | None


class IdleInput(BaseModel):
    """An input whose connected upstream processors are all idle."""

    idle: Literal[True] = True
    vertex: str = Field(description="the upstream vertex")
    ordinal: int = Field(description="the input's ordinal on this vertex")
    processors: list[int] = Field(description="the idle upstream processors")


class ProcessorWatermark(BaseModel):
    index: int
    member: int
    coalesced_wm: int | None
    held_back_by: Holder | IdleInput | None


class VertexWatermark(BaseModel):
    vertex: str
    coalesced_wm: int | None
    lag_ms: int | None = Field(
        description="now minus coalesced_wm; null when event time is more than a day from now"
    )
    held_back_by: Holder | IdleInput | None = Field(
        description="null for a source, or when nothing upstream reported"
    )
    idle_inputs: list[IdleInput]
    skew_ms: int | None = Field(description="max - min of the upstream forwarded watermarks")
    queue_size: int
    queue_capacity: int
    queue_fill: float | None = Field(description="queue_size / queue_capacity")
    backpressure_ratio: float
    backpressure_level: BackpressureLevel
    processors: list[ProcessorWatermark]


class WatermarkReport(BaseModel):
    job_id: uuid.UUID
    at_ms: int | None = Field(description="when the metrics document was produced")
    now_ms: int
    vertices: list[VertexWatermark]


@dataclass(frozen=True)
class _Upstream:
    """One upstream processor as seen in the document."""

    vertex: str
    index: int | None
    member: int | None
    wm: int | None
    idle: bool

    def holder(self) -> Holder:
        return Holder(
            vertex=self.vertex, processor=self.index, member=self.member, last_forwarded_wm=self.wm
        )


def _upstream(plan: ExecutionPlan, doc: JobMetrics, name: str) -> list[_Upstream]:
    vertex = doc.vertices.get(name)
    if vertex is None:
        return []
    local = plan.vertex(name).local_parallelism
    if not vertex.processors:
        return [_Upstream(name, None, None, vertex.last_forwarded_wm, vertex.idle)]
    return [
        _Upstream(name, p.index, p.index // local, p.last_forwarded_wm, p.idle)
        for p in vertex.processors
    ]


def _connected(
    plan: ExecutionPlan, edge: EdgePlan, upstream: list[_Upstream], processor: int
) -> list[_Upstream]:
    """The upstream processors whose watermarks reach ``processor`` over ``edge``."""
    senders = upstream_of(edge, plan.vertex(edge.source), plan.vertex(edge.to), processor)
    return [u for u in upstream if u.index is None or u.index in senders]


def _lowest(candidates: Sequence[_Upstream]) -> _Upstream:
    """No watermark yet counts as the lowest of all."""
    return min(candidates, key=lambda u: (u.wm is not None, u.wm or 0))


def _for_processor(
    plan: ExecutionPlan, edges: list[tuple[EdgePlan, list[_Upstream]]], processor: int
) -> tuple[Holder | IdleInput | None, list[IdleInput], list[_Upstream]]:
    active: list[_Upstream] = []
    idle: list[IdleInput] = []
    for edge, upstream in edges:
        feeders = _connected(plan, edge, upstream, processor)
        if not feeders:
            continue
        if all(u.idle for u in feeders):
            indices = [u.index for u in feeders if u.index is not None]
            idle.append(IdleInput(vertex=edge.source, ordinal=edge.to_ordinal, processors=indices))
        else:
            active.extend(u for u in feeders if not u.idle)
    if active:
        return _lowest(active).holder(), idle, active
    return (idle[0] if idle else None), idle, active


def _vertex(plan: ExecutionPlan, doc: JobMetrics, spec: VertexPlan, now: int) -> VertexWatermark:
    metrics = doc.vertices.get(spec.name) or VertexMetrics()
    edges = [(e, _upstream(plan, doc, e.source)) for e in plan.inbound(spec.name)]
    reported = {p.index: p for p in metrics.processors}
    processors: list[ProcessorWatermark] = []
    idle_inputs: dict[tuple[str, int], IdleInput] = {}
    feeders: dict[tuple[str, int | None], _Upstream] = {}
    for index in range(spec.parallelism):
        member = index // spec.local_parallelism
        holder, idle, active = _for_processor(plan, edges, index)
        for entry in idle:
            known = idle_inputs.setdefault((entry.vertex, entry.ordinal), entry.model_copy())
            known.processors = sorted(set(known.processors) | set(entry.processors))
        feeders.update(((u.vertex, u.index), u) for u in active)
        own = reported.get(index)
        processors.append(
            ProcessorWatermark(
                index=index,
                member=member,
                coalesced_wm=own.coalesced_wm if own else None,
                held_back_by=holder,
            )
        )
    held_back_by = _vertex_holder(processors)
    forwarded = [u.wm for u in feeders.values() if u.wm is not None]
    coalesced = metrics.coalesced_wm
    return VertexWatermark(
        vertex=spec.name,
        coalesced_wm=coalesced,
        lag_ms=wall_clock_lag(now, coalesced),
        held_back_by=held_back_by,
        idle_inputs=list(idle_inputs.values()),
        skew_ms=max(forwarded) - min(forwarded) if forwarded else None,
        queue_size=metrics.queue_size,
        queue_capacity=metrics.queue_capacity,
        queue_fill=(
            metrics.queue_size / metrics.queue_capacity if metrics.queue_capacity else None
        ),
        backpressure_ratio=metrics.backpressure_ratio,
        backpressure_level=BackpressureLevel.of(metrics.backpressure_ratio),
        processors=processors,
    )


def _vertex_holder(processors: list[ProcessorWatermark]) -> Holder | IdleInput | None:
    """The lowest holder of any of its processors (the vertex's coalesced mark is their min);
    with no active upstream at all, the first idle input."""
    held = [p.held_back_by for p in processors if isinstance(p.held_back_by, Holder)]
    if held:
        return min(held, key=_mark)
    return next((p.held_back_by for p in processors if p.held_back_by is not None), None)


def _mark(holder: Holder | IdleInput | None) -> tuple[bool, int]:
    wm = holder.last_forwarded_wm if isinstance(holder, Holder) else None
    return wm is not None, wm or 0


def watermark_report(plan: ExecutionPlan, doc: JobMetrics, now: int) -> WatermarkReport:
    """Each vertex of ``plan`` (in order) with who holds its watermark back in ``doc``."""
    return WatermarkReport(
        job_id=doc.job_id,
        at_ms=doc.at_ms if doc.vertices else None,
        now_ms=now,
        vertices=[_vertex(plan, doc, plan.vertex(name), now) for name in plan.order],
    )
