"""Who holds a watermark back, from synthetic documents on a real plan: a distributed input
(every upstream processor feeds every processor) and a local one (same member only)."""

from __future__ import annotations

import uuid
from typing import Any

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import ExecutionPlan, build_plan
from jetspark.dag.validate import validate_job
from jetspark.metrics.report import JobMetrics, ProcessorMetrics, aggregate_vertex
from jetspark.metrics.watermarks import Holder, IdleInput, watermark_report

NOW = 10_000

TWO_INPUTS: dict[str, Any] = {
    "name": "watermarks",
    "dag": {
        "vertices": [
            {"name": "a", "processor": "source.sequence", "params": {"count": 10}},
            {"name": "b", "processor": "source.sequence", "params": {"count": 10}},
            {"name": "out", "processor": "sink.results"},
        ],
        "edges": [
            {"from": "a", "to": "out", "distributed": True},
            {"from": "b", "to": "out", "to_ordinal": 1},
        ],
    },
    "config": {"members": 2, "local_parallelism": 2},
}


def two_input_plan() -> ExecutionPlan:
    return build_plan(validate_job(JobSpec.model_validate(TWO_INPUTS)))


def processors(marks: list[int | None], *, idle: bool = False) -> list[ProcessorMetrics]:
    return [
        ProcessorMetrics(index=g, member=g // 2, last_forwarded_wm=wm, idle=idle)
        for g, wm in enumerate(marks)
    ]


def doc(a: list[ProcessorMetrics], b: list[ProcessorMetrics], out_wm: int | None) -> JobMetrics:
    out = aggregate_vertex(
        [ProcessorMetrics(index=g, member=g // 2, coalesced_wm=out_wm) for g in range(4)]
    )
    out.queue_size, out.queue_capacity, out.backpressure_ratio = 512, 2048, 0.2
    return JobMetrics(
        job_id=uuid.uuid4(),
        at_ms=NOW,
        vertices={"a": aggregate_vertex(a), "b": aggregate_vertex(b), "out": out},
    )


def test_a_distributed_input_is_held_back_by_its_lowest_processor_and_an_idle_input_is_named() -> (
    None
):
    report = watermark_report(
        two_input_plan(),
        doc(processors([1000, 900, 1200, 1100]), processors([0] * 4, idle=True), 900),
        NOW,
    )
    out = report.vertices[2]
    assert out.vertex == "out" and out.coalesced_wm == 900 and out.lag_ms == NOW - 900
    assert out.held_back_by == Holder(vertex="a", processor=1, member=0, last_forwarded_wm=900)
    # Every processor of ``out`` is fed by every processor of ``a``: the same holder for all.
    assert {p.held_back_by == out.held_back_by for p in out.processors} == {True}
    assert out.idle_inputs == [IdleInput(vertex="b", ordinal=1, processors=[0, 1, 2, 3])]
    assert out.skew_ms == 300
    assert (out.queue_fill, out.backpressure_level.value) == (0.25, "low")
    sources = report.vertices[:2]
    assert [(v.vertex, v.held_back_by, v.idle_inputs) for v in sources] == [
        ("a", None, []),
        ("b", None, []),
    ]


def test_a_local_input_is_held_back_per_member() -> None:
    report = watermark_report(
        two_input_plan(),
        doc(processors([0] * 4, idle=True), processors([500, 700, 300, 800]), 300),
        NOW,
    )
    out = report.vertices[2]
    holders = [p.held_back_by for p in out.processors]
    assert [h.processor for h in holders if isinstance(h, Holder)] == [0, 0, 2, 2]
    assert out.held_back_by == Holder(vertex="b", processor=2, member=1, last_forwarded_wm=300)
    assert [(i.vertex, i.ordinal, i.processors) for i in out.idle_inputs] == [
        ("a", 0, [0, 1, 2, 3])
    ]
    assert out.skew_ms == 500


def test_every_input_idle_names_an_idle_input_and_no_mark_yet_holds_back_most() -> None:
    plan = two_input_plan()
    idle = watermark_report(
        plan, doc(processors([5] * 4, idle=True), processors([6] * 4, idle=True), None), NOW
    ).vertices[2]
    assert isinstance(idle.held_back_by, IdleInput) and idle.held_back_by.idle
    assert idle.held_back_by.vertex == "a" and idle.lag_ms is None
    waiting = watermark_report(
        plan, doc(processors([100, None, 50, 70]), processors([9] * 4, idle=True), None), NOW
    ).vertices[2]
    assert waiting.held_back_by == Holder(vertex="a", processor=1, member=0, last_forwarded_wm=None)


def test_an_upstream_without_processor_reports_stands_for_itself_and_no_document_is_empty() -> None:
    plan = two_input_plan()
    built_in = JobMetrics(job_id=uuid.uuid4(), at_ms=NOW)
    built_in.vertices["a"] = aggregate_vertex([])
    built_in.vertices["a"].last_forwarded_wm = 40
    out = watermark_report(plan, built_in, NOW).vertices[2]
    assert out.held_back_by == Holder(vertex="a", processor=None, last_forwarded_wm=40)
    empty = watermark_report(plan, JobMetrics.empty(uuid.uuid4()), NOW)
    assert empty.at_ms is None
    assert [v.held_back_by for v in empty.vertices] == [None, None, None]
