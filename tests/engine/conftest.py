"""Run DAGs through the engine on the shared SparkSession."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from pyspark.sql import SparkSession

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import ExecutionPlan, build_plan
from jetspark.dag.validate import validate_job
from worker.engine import JobControl, JobOutcome, RunnableJob, run_job
from worker.engine.observed import ObservedAggregates

pytestmark = pytest.mark.spark

RunDag = Callable[..., tuple[JobOutcome, ExecutionPlan]]


def run_runnable(spark: SparkSession, job: RunnableJob, control: JobControl) -> JobOutcome:
    """Run a job as the worker does: its stored plan, read back, under its own id."""
    control.job_id = job.id
    return run_job(spark, ExecutionPlan.model_validate(job.plan), control)


def job_body(
    vertices: list[dict[str, Any]], edges: list[dict[str, Any]], **config: Any
) -> dict[str, Any]:
    return {"name": "t", "dag": {"vertices": vertices, "edges": edges}, "config": config}


@pytest.fixture
def run_dag(spark: SparkSession) -> RunDag:
    """Validate, plan and run a job body; return the outcome and the plan it ran."""

    def run(
        body: dict[str, Any], *, seed: int | None = 7, results_cap: int = 100_000
    ) -> tuple[JobOutcome, ExecutionPlan]:
        spec = JobSpec.model_validate(body)
        plan = build_plan(validate_job(spec), all_to_one_seed=seed)
        job = RunnableJob(
            id=uuid.uuid4(),
            attempt=1,
            plan=plan.model_dump(mode="json"),
        )
        control = JobControl(
            job_group=f"test-{job.id}", cancelled=threading.Event(), results_cap=results_cap
        )
        return run_runnable(spark, job, control), plan

    return run


from tests.jdbc.conftest import (  # noqa: E402, F401 - fixtures, used by name
    connections,
    db,
    jdbc_database,
    run_jdbc,
)
from tests.kafka.conftest import kafka  # noqa: E402, F401 - a fixture, used by name


@dataclass(frozen=True)
class Observed:
    """One observation the engine made: its vertex, the columns of the frame it was made on
    and the aggregates it computes."""

    vertex: str
    columns: tuple[str, ...]
    aggregates: tuple[str, ...]


@pytest.fixture
def observations(monkeypatch: pytest.MonkeyPatch) -> list[Observed]:
    """The observations the engine makes as it builds a job, in order."""
    seen: list[Observed] = []
    original = ObservedAggregates.__init__

    def noted(self: ObservedAggregates, frame: Any, aggregates: Any, **kw: Any) -> None:
        seen.append(Observed(str(kw.get("vertex")), tuple(frame.columns), tuple(aggregates)))
        original(self, frame, aggregates, **kw)

    monkeypatch.setattr(ObservedAggregates, "__init__", noted)
    return seen
