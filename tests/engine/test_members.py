"""``config.members`` unset: planned again for the executors a worker sees; results unchanged."""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from jetspark.dag.errors import DagValidationError
from jetspark.dag.members import fitting_members, plan_for_executors
from jetspark.dag.model import JobSpec
from jetspark.dag.plan import ExecutionPlan, build_plan
from jetspark.dag.validate import validate_job
from jetspark.settings import DagLimits
from jetspark.spark_session import executor_count
from tests.engine.conftest import run_runnable
from worker.engine import JobControl, RunnableJob

pytestmark = pytest.mark.spark

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "word-count.json"
LINES = ["to be or not to be", "that is the question", "be quick, be brave"]


def word_count(members: int | None) -> dict[str, Any]:
    """The example word count with an all-to-one edge into a total count besides."""
    body: dict[str, Any] = json.loads(EXAMPLE.read_text())
    body["dag"]["vertices"][0]["params"]["items"] = [{"line": line} for line in LINES]
    body["dag"]["vertices"] += [
        {"name": "total", "processor": "aggregate",
         "params": {"aggregations": {"words": "count(*)"}, "stage": "single"}},
        {"name": "total_sink", "processor": "sink.results"},
    ]  # fmt: skip
    body["dag"]["edges"] += [
        {"from": "tokenize", "to": "total", "from_ordinal": 1, "routing": "all_to_one",
         "distributed": True},
        {"from": "total", "to": "total_sink"},
    ]  # fmt: skip
    body["config"] = {} if members is None else {"members": members}
    return body


def submitted_plan(body: dict[str, Any]) -> dict[str, Any]:
    """The plan the API stores at submission (it sees no executors)."""
    return build_plan(validate_job(JobSpec.model_validate(body))).model_dump(mode="json")


def run(spark: SparkSession, body: dict[str, Any], plan: dict[str, Any]) -> dict[str, Any]:
    job = RunnableJob(id=uuid.uuid4(), attempt=1, plan=plan)
    control = JobControl(job_group=f"members-{job.id}", cancelled=threading.Event())
    results = run_runnable(spark, job, control).results
    return {
        "words": {r["key"]: r["count"] for r in results["sink"]},
        "total": [r["words"] for r in results["total_sink"]],
    }


def test_a_local_master_has_one_member(spark: SparkSession) -> None:
    assert executor_count(spark) == 1


def test_unset_members_are_planned_for_the_executors_keeping_the_drawn_partition() -> None:
    body = word_count(None)
    stored = submitted_plan(body)
    assert stored["members"] == 1
    fitted = plan_for_executors(stored, executors=3)
    assert fitted is not None
    plan, before = ExecutionPlan.model_validate(fitted), ExecutionPlan.model_validate(stored)
    assert plan.members == 3
    assert {v.name: v.parallelism for v in plan.vertices} == {
        v.name: 3 * v.parallelism for v in before.vertices
    }
    assert [e.all_to_one_pid for e in plan.edges] == [e.all_to_one_pid for e in before.edges]
    assert plan.stages == before.stages


def test_members_given_by_the_user_or_already_fitting_are_kept() -> None:
    given = word_count(2)
    assert plan_for_executors(submitted_plan(given), executors=5) is None
    unset = word_count(None)
    assert plan_for_executors(submitted_plan(unset), executors=1) is None
    assert plan_for_executors(None, executors=4) is None
    assert plan_for_executors({"name": "broken"}, executors=4) is None


def test_the_replan_reads_the_accepted_dag_from_the_plan_without_validating_again() -> None:
    body = word_count(None)
    stored = submitted_plan(body)
    stricter = DagLimits(max_vertices=2, allowed_python_modules=[])  # this worker's settings
    with pytest.raises(DagValidationError):
        validate_job(JobSpec.model_validate(body), stricter)
    fitted = plan_for_executors(stored, executors=2, limits=stricter)
    assert fitted is not None and fitted["members"] == 2
    assert [v["params"] for v in fitted["vertices"]] == [v["params"] for v in stored["vertices"]]


def test_members_stay_within_the_parallelism_limit() -> None:
    assert fitting_members(executors=100, widest_local_parallelism=4, max_parallelism=256) == 64
    assert fitting_members(executors=3, widest_local_parallelism=4, max_parallelism=256) == 3
    assert fitting_members(executors=9, widest_local_parallelism=300, max_parallelism=256) == 1
    body = word_count(None)
    fitted = plan_for_executors(
        submitted_plan(body), executors=50, limits=DagLimits(max_parallelism=8)
    )
    assert fitted is not None and fitted["members"] == 4  # local parallelism 2


def test_results_are_the_same_on_any_number_of_members(spark: SparkSession) -> None:
    body = word_count(None)
    stored = submitted_plan(body)
    expected = Counter(w for line in LINES for w in line.replace(",", "").split())
    one = run(spark, body, stored)
    assert one == {"words": dict(expected), "total": [sum(expected.values())]}
    for executors in (2, 3):
        fitted = plan_for_executors(stored, executors=executors)
        assert fitted is not None and fitted["members"] == executors
        assert run(spark, body, fitted) == one
