"""The engine runs the plan the API stored: no second validation with the worker's limits."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from pyspark.sql import SparkSession

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import ExecutionPlan, build_plan, planned_dag
from jetspark.dag.snapshots import dag_fingerprint
from jetspark.dag.validate import validate_job
from tests.engine.conftest import job_body
from worker.engine import JobControl, RunnableJob, run_job

BODY = job_body(
    [
        {"name": "in", "processor": "source.items", "params": {"items": [{"x": 1}, {"x": 2}]}},
        {"name": "double", "processor": "map", "params": {"select": {"y": "x * 2"}}},
        {"name": "out", "processor": "sink.results"},
    ],
    [{"from": "in", "to": "double"}, {"from": "double", "to": "out"}],
)


def test_the_plan_carries_each_vertex_role_and_params_back_as_validated() -> None:
    spec = JobSpec.model_validate(BODY)
    dag = validate_job(spec)
    stored: dict[str, Any] = build_plan(dag).model_dump(mode="json")
    plan = ExecutionPlan.model_validate(stored)
    assert [(v.name, v.role) for v in plan.vertices] == [
        ("in", "source"),
        ("double", "transform"),
        ("out", "sink"),
    ]
    again = planned_dag(plan)
    assert again is not None
    assert again.params == dag.params
    assert (again.order, again.inbound, again.outbound) == (dag.order, dag.inbound, dag.outbound)
    assert (again.parallelism, again.local_parallelism) == (dag.parallelism, dag.local_parallelism)
    assert again.spec.config == spec.config and again.spec.name == spec.name
    assert plan.fingerprint == dag_fingerprint(spec)
    older = plan.model_copy(
        update={"vertices": [v.model_copy(update={"params": None}) for v in plan.vertices]}
    )
    assert planned_dag(older) is None  # a plan stored before: validated as it was
    assert planned_dag(plan.model_copy(update={"config": None})) is None


@pytest.mark.spark
def test_the_engine_runs_from_the_plan_alone(spark: SparkSession) -> None:
    """The definition is not read when the plan carries the job: a plan's job config (here
    a stream's guarantee and epochs) is what the engine runs with."""
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
    job = RunnableJob(uuid.uuid4(), 1, {"not": "a job"}, plan.model_dump(mode="json"))
    outcome = run_job(spark, job, JobControl(job_group=f"test-{job.id}"))
    assert sorted(r["seq"] for r in outcome.results["out"]) == list(range(40))


@pytest.mark.spark
def test_a_plan_stored_before_it_carried_the_config_runs_with_the_definition(
    spark: SparkSession,
) -> None:
    spec = JobSpec.model_validate(BODY)
    stored = build_plan(validate_job(spec)).model_dump(mode="json")
    for field in ("name", "config", "fingerprint"):
        del stored[field]
    job = RunnableJob(uuid.uuid4(), 1, spec.as_json(), stored)
    outcome = run_job(spark, job, JobControl(job_group=f"test-{job.id}"))
    assert sorted(r["y"] for r in outcome.results["out"]) == [2, 4]


@pytest.mark.spark
def test_a_worker_with_stricter_limits_runs_what_the_api_accepted(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = JobSpec.model_validate(BODY)
    plan = build_plan(validate_job(spec))
    monkeypatch.setenv("JETSPARK_DAG_MAX_VERTICES", "1")  # the worker's own, stricter setting
    job = RunnableJob(uuid.uuid4(), 1, spec.as_json(), plan.model_dump(mode="json"))
    outcome = run_job(spark, job, JobControl(job_group=f"test-{job.id}"))
    assert sorted(r["y"] for r in outcome.results["out"]) == [2, 4]
