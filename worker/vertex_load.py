"""Busy and backpressure of the vertices Spark runs, from their pipelines' stages (SPEC §6).

Over a window of wall time ``W`` (a stream: its last ``STREAM_WINDOW_MS`` of finished
queries; a batch job: all of its Spark work so far):

- ``busy_ratio``: the task time of the stages that ran the vertex's work, per task slot
  used (``min(tasks, cores)``), over ``W``: 1.0 is a vertex whose stages kept every core they
  could use busy the whole window. Vertices fused into one stage share its time, as Flink's
  chained operators share their task's busy time.
- ``backpressure_ratio``: the share of ``W`` in which the vertex's own stages had finished
  their part of a query while the stages downstream of them (the same query's later ones)
  still ran and held its input back. In a stream, that is while the stream was behind (an
  epoch started later than due, ``JobControl.behind``): a stream that keeps its pace waits
  on nothing. In a batch job, whose input is all there, the stages run one after the other
  where Jet's processors run side by side: a stage is held back for the work (per task slot)
  the query's later stages did beyond its own (its downstream is slower than it is).

Both are capped at 1; the levels (``ok`` < 0.1 <= ``low`` < 0.5 <= ``high``) are the same as
Python processors'.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from worker.spark_pipelines import PipelineRun

STREAM_WINDOW_MS = 10_000
"""A stream's busy and backpressure are over its newest this many ms of Spark work."""

Span = tuple[int, int]


@dataclass(frozen=True)
class VertexLoad:
    busy_ratio: float
    backpressure_ratio: float


def _union(spans: Iterable[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _intersect(a: list[Span], b: list[Span]) -> list[Span]:
    found: list[Span] = []
    for start, end in a:
        for other_start, other_end in b:
            low, high = max(start, other_start), min(end, other_end)
            if high > low:
                found.append((low, high))
    return _union(found)


def _minus(a: list[Span], b: list[Span]) -> list[Span]:
    found: list[Span] = []
    for start, end in a:
        pieces = [(start, end)]
        for cut_start, cut_end in b:
            pieces = [
                piece
                for low, high in pieces
                for piece in ((low, min(high, cut_start)), (max(low, cut_end), high))
                if piece[1] > piece[0]
            ]
        found.extend(pieces)
    return _union(found)


def _length(spans: Iterable[Span]) -> int:
    return sum(end - start for start, end in spans)


def window_of(runs: Sequence[PipelineRun], *, stream: bool) -> Span | None:
    """The window the loads are measured over: it ends where the newest query ended."""
    if not runs:
        return None
    end = max(r.query_ended_ms for r in runs)
    start = min(r.started_ms for r in runs)
    if stream:
        start = max(start, end - STREAM_WINDOW_MS)
    return (start, end) if end > start else None


def _work_per_slot(run: PipelineRun, cores: int) -> float:
    return run.run_ms / max(1, min(run.tasks, cores))


def _held(run: PipelineRun, runs: Sequence[PipelineRun], cores: int, *, stream: bool) -> Span:
    """When ``run``'s stage may count as held back by the stages after it in its query.

    A stream's: from its end to the query's (counted only while the stream was behind). A
    batch job's stages run one after the other where Jet's processors run side by side, so a
    stage is held back only for the work (per task slot) its query's later stages did beyond
    its own: cheap stages in a row hold nothing back, whatever Spark's fixed cost per stage."""
    if stream:
        return (run.ended_ms, run.query_ended_ms)
    later = sum(
        _work_per_slot(other, cores)
        for other in runs
        if other.query_ended_ms == run.query_ended_ms and other.started_ms >= run.ended_ms
    )
    extra = max(0.0, later - _work_per_slot(run, cores))
    return (run.ended_ms, min(run.query_ended_ms, run.ended_ms + int(extra)))


def vertex_loads(
    runs: Sequence[PipelineRun], window: Span, cores: int, behind: Sequence[Span] | None
) -> dict[str, VertexLoad]:
    """Each vertex's load over ``window`` (``behind``: the spans a stream ran behind; None:
    a batch job, always behind)."""
    width = window[1] - window[0]
    if width <= 0:
        return {}
    lagging = [window] if behind is None else _intersect(_union(behind), [window])
    busy: dict[str, float] = {}
    waits: dict[str, list[Span]] = {}
    running: dict[str, list[Span]] = {}
    for run in runs:
        span = run.ended_ms - run.started_ms
        inside = _length(_intersect([(run.started_ms, run.ended_ms)], [window]))
        share = inside / span if span > 0 else float(window[0] <= run.ended_ms <= window[1])
        slots = max(1, min(run.tasks, cores))
        for vertex in run.vertices:
            busy[vertex] = busy.get(vertex, 0.0) + run.run_ms * share / slots
            waits.setdefault(vertex, []).append(_held(run, runs, cores, stream=behind is not None))
            running.setdefault(vertex, []).append((run.started_ms, run.ended_ms))
    loads: dict[str, VertexLoad] = {}
    for vertex, busy_ms in busy.items():
        waited = _minus(_union(waits[vertex]), _union(running[vertex]))
        held = _length(_intersect(waited, lagging))
        loads[vertex] = VertexLoad(
            busy_ratio=round(min(1.0, busy_ms / width), 4),
            backpressure_ratio=round(min(1.0, held / width), 4),
        )
    return loads


def fused_loads(
    loads: dict[str, VertexLoad], stages: Sequence[Sequence[str]]
) -> dict[str, VertexLoad]:
    """``loads`` with a vertex no query named (no observation of its own in its stage: a
    ``flat_map`` whose count its aggregate takes) given the load of a vertex fused with it
    (``stages``: the plan's, each the vertices that run in one Spark stage)."""
    found = dict(loads)
    for stage in stages:
        known = next((found[v] for v in stage if v in found), None)
        if known is not None:
            for vertex in stage:
                found.setdefault(vertex, known)
    return found
