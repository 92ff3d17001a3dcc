"""The engine runs the plan the API stored, as it is: a typed value, not validated or
planned again, whatever the worker's own limits."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from jetspark.dag import kinds as p
from jetspark.dag.model import JobSpec
from jetspark.dag.plan import PLAN_VERSION, ExecutionPlan, build_plan, dag_fingerprint, rescale
from jetspark.dag.validate import validate_job
from tests.engine.conftest import job_body
from tests.engine.test_members import word_count
from tests.engine.test_pregrouped import two_stage, words
from worker.engine import JobControl, run_job

BODY = job_body(
    [
        {"name": "in", "processor": "source.items", "params": {"items": [{"x": 1}, {"x": 2}]}},
        {"name": "double", "processor": "map", "params": {"select": {"y": "x * 2"}}},
        {"name": "out", "processor": "sink.results"},
    ],
    [{"from": "in", "to": "double"}, {"from": "double", "to": "out"}],
)


def test_each_vertex_carries_its_typed_params_and_what_it_is() -> None:
    spec = JobSpec.model_validate(BODY)
    dag = validate_job(spec)
    stored: dict[str, Any] = build_plan(dag).model_dump(mode="json")
    plan = ExecutionPlan.model_validate(stored)
    assert plan.version == PLAN_VERSION and not plan.runs_in_epochs
    assert [(v.name, v.role) for v in plan.vertices] == [
        ("in", "source"),
        ("double", "transform"),
        ("out", "sink"),
    ]
    assert {v.name: v.params for v in plan.vertices} == dag.params
    assert isinstance(plan.vertex("double").params, p.MapParams)
    assert all(v.bounded and not v.endless for v in plan.vertices)
    assert plan.config == spec.config and plan.name == spec.name
    assert plan.fingerprint == dag_fingerprint(spec)
    assert ExecutionPlan.model_validate(plan.model_dump(mode="json")) == plan
    assert [(e.source, e.to, e.routing, e.config) for e in plan.edges] == [
        (e.source, e.to, e.routing, e.config) for e in spec.dag.edges
    ]


def test_a_plan_names_what_its_vertices_touch_and_whether_it_streams() -> None:
    body = job_body(
        [
            {"name": "in", "processor": "source.redis_stream", "params": {"streams": ["a", "b"]}},
            {"name": "files", "processor": "sink.files", "params": {"path": "/tmp/out"}},
        ],
        [{"from": "in", "to": "files"}],
    )
    plan = build_plan(validate_job(JobSpec.model_validate(body)))
    source, sink = plan.vertices
    assert plan.runs_in_epochs and not source.bounded and source.endless
    assert source.touches.redis_names == ["a", "b"] and sink.touches.paths == ["/tmp/out"]
    assert plan.sources == ["in"] and plan.sinks == ["files"]


def test_rescaling_is_a_function_from_plan_to_plan() -> None:
    plan = build_plan(validate_job(JobSpec.model_validate(BODY)), all_to_one_seed=1)
    wider = rescale(plan, 3)
    assert wider.members == 3
    assert [v.parallelism for v in wider.vertices] == [3 * v.parallelism for v in plan.vertices]
    assert (wider.fingerprint, wider.config, wider.stages) == (
        plan.fingerprint,
        plan.config,
        plan.stages,
    )


EXAMPLES = sorted(Path(__file__).parents[2].glob("examples/*.json"))
BODIES = {
    "map": BODY,
    "pregrouped": two_stage(words(10), {"count": "count(*)"}),
    "all-to-one": word_count(None),
    **{path.stem: json.loads(path.read_text()) for path in EXAMPLES},
}


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
def test_a_rescaled_plan_is_the_plan_of_the_dag_validated_for_those_members(
    body: dict[str, Any],
) -> None:
    """What a worker rescales (``config.members`` unset) comes out as ``build_plan`` plans
    the DAG validated for that many members: parallelism, exchanges, pregrouped edges and
    stages; the drawn all-to-one partitions, config and fingerprint as submitted."""
    unset = {**body, "config": {k: v for k, v in body["config"].items() if k != "members"}}
    spec = JobSpec.model_validate(unset)
    plan = build_plan(validate_job(spec), all_to_one_seed=11)
    for members in (2, 3, 5, 1):
        expected = build_plan(validate_job(spec, default_members=members), all_to_one_seed=11)
        assert rescale(plan, members) == expected
    assert rescale(rescale(plan, 4), 1) == plan


def test_rescaling_decides_the_pregrouped_edges_again() -> None:
    """An accumulate's rows are one per key with one member only (``_is_pregrouped``)."""
    plan = build_plan(validate_job(JobSpec.model_validate(BODIES["pregrouped"])))
    assert [e.pregrouped for e in plan.edges] == [False, True, False]
    assert not any(e.pregrouped for e in rescale(plan, 2).edges)
    assert rescale(rescale(plan, 2), 1).edges == plan.edges


@pytest.mark.spark
def test_the_engine_runs_from_the_plan_alone(spark: SparkSession) -> None:
    """The plan's job config (here a stream's epochs) is what the engine runs with."""
    body = job_body(
        [
            {"name": "in", "processor": "source.sequence",
             "params": {"count": 40, "rate_per_s": 400}},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "in", "to": "out"}],
    )  # fmt: skip
    body["config"] = {"epoch_interval_ms": 50, "members": 1, "local_parallelism": 1}
    plan = build_plan(validate_job(JobSpec.model_validate(body)))
    outcome = run_job(spark, plan, JobControl(job_group=f"test-{uuid.uuid4()}"))
    assert sorted(r["seq"] for r in outcome.results["out"]) == list(range(40))


@pytest.mark.spark
def test_a_worker_with_stricter_limits_runs_what_the_api_accepted(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = build_plan(validate_job(JobSpec.model_validate(BODY)))
    monkeypatch.setenv("JETSPARK_DAG_MAX_VERTICES", "1")  # the worker's own, stricter setting
    stored = ExecutionPlan.model_validate(plan.model_dump(mode="json"))
    outcome = run_job(spark, stored, JobControl(job_group=f"test-{uuid.uuid4()}"))
    assert sorted(r["y"] for r in outcome.results["out"]) == [2, 4]
