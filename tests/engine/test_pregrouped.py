"""A combine over a ``pregrouped`` edge (its accumulate's rows one per key, one member)
finishes each row where it is: the rows, their types, where they go and the per-vertex
counts are those of the general path (route, then merge), with one Spark job less."""

from __future__ import annotations

import random
import threading
import uuid
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from jetspark.dag.kinds import PROCESSORS
from jetspark.dag.model import JobSpec
from jetspark.dag.partitioning import partition_id
from jetspark.dag.plan import ExecutionPlan, build_plan
from jetspark.dag.validate import validate_job
from tests.engine.conftest import job_body
from worker.engine import JobControl, RunnableJob
from worker.engine.contract import VertexCounts
from worker.engine.execution import Execution, run_vertices
from worker.engine.routing import TARGET_PROCESSOR

pytestmark = pytest.mark.spark

WORDS = ["to", "be", "or", "not", "that", "is", "the", "question", "jet", "spark", "über"]


@dataclass
class Run:
    results: list[dict[str, Any]]
    counts: dict[str, VertexCounts]
    combine: StructType
    """The schema of what the combine emitted."""
    spark_jobs: int


def run(
    spark: SparkSession, body: dict[str, Any], *, pregrouped: bool, results_cap: int = 100_000
) -> Run:
    """Run ``body`` with its pregrouped edges as planned, or all taking the general path."""
    spec = JobSpec.model_validate(body)
    dag = validate_job(spec)
    plan = build_plan(dag, all_to_one_seed=7)
    if not pregrouped:
        edges = [e.model_copy(update={"pregrouped": False}) for e in plan.edges]
        plan = plan.model_copy(update={"edges": edges})
    job = RunnableJob(id=uuid.uuid4(), attempt=1, plan=plan.model_dump(mode="json"))
    control = JobControl(
        job_group=f"test-{job.id}", cancelled=threading.Event(), results_cap=results_cap
    )
    execution, jobs = executed(spark, plan, control)
    combine = execution.frames["combine"].drop(TARGET_PROCESSOR).schema
    return Run(execution.sink_results["sink"], execution.counters.counts(), combine, jobs)


def executed(
    spark: SparkSession, plan: ExecutionPlan, control: JobControl
) -> tuple[Execution, int]:
    """``plan`` run in ``control``'s Spark job group, and how many Spark jobs it ran."""
    context = spark.sparkContext
    context.setJobGroup(control.job_group, "pregrouped test")
    execution = Execution(spark, plan, control)
    try:
        run_vertices(execution)
    finally:
        execution.release()
        context.setJobGroup("", "")
    return execution, len(context.statusTracker().getJobIdsForGroup(control.job_group))


def two_stage(
    items: list[dict[str, Any]],
    aggregations: dict[str, str],
    *,
    members: int = 1,
    lp: int = 2,
    after: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """source.items -> (partitioned on g, local) accumulate -> (partitioned on key,
    distributed) combine -> [``after``] -> sink.results: the seeds' two-stage aggregation."""
    vertices: list[dict[str, Any]] = [
        {"name": "src", "processor": "source.items", "params": {"items": items}},
        {"name": "accumulate", "processor": "aggregate",
         "params": {"key": "g", "aggregations": aggregations, "stage": "accumulate"}},
        {"name": "combine", "processor": "aggregate",
         "params": {"key": "key", "aggregations": aggregations, "stage": "combine"}},
        {"name": "sink", "processor": "sink.results"},
    ]  # fmt: skip
    edges: list[dict[str, Any]] = [
        {"from": "src", "to": "accumulate", "routing": "partitioned", "key": "g"},
        {"from": "accumulate", "to": "combine", "routing": "partitioned", "key": "key",
         "distributed": True},
    ]  # fmt: skip
    if after is None:
        edges.append({"from": "combine", "to": "sink"})
    else:
        vertices.insert(3, {"name": "after", **after})
        edges += [{"from": "combine", "to": "after"}, {"from": "after", "to": "sink"}]
    return job_body(vertices, edges, members=members, local_parallelism=lp)


def words(count: int, seed: int = 3) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [{"g": rng.choice(WORDS) + str(rng.randint(0, 30))} for _ in range(count)]


def processor_of(key: str, p: int = 2) -> int:
    return partition_id(key) % p


def pregrouped_edges(plan: ExecutionPlan) -> set[tuple[str, str]]:
    return {(e.source, e.to) for e in plan.edges if e.pregrouped}


def test_word_count_fused_gives_the_same_rows_and_counts_with_a_spark_job_less(
    spark: SparkSession,
) -> None:
    items = words(2_000)
    body = two_stage(items, {"count": "count(*)"})
    fused = run(spark, body, pregrouped=True)
    general = run(spark, body, pregrouped=False)
    expected = Counter(item["g"] for item in items)
    assert {row["key"]: row["count"] for row in fused.results} == dict(expected)
    assert sorted(fused.results, key=str) == sorted(general.results, key=str)
    assert [list(row) for row in fused.results] == [["key", "count"]] * len(expected)
    assert fused.combine == general.combine
    assert fused.counts == general.counts
    assert fused.counts["accumulate"].items_in == len(items)
    assert fused.counts["combine"].items_in == fused.counts["sink"].items_in == len(expected)
    # the records come in processor order, as the general path's placed rows give them
    for result in (fused, general):
        order = [processor_of(row["key"]) for row in result.results]
        assert order == sorted(order)
    assert fused.spark_jobs == general.spark_jobs - 1


MERGEABLE = {
    "n": "count(*)",
    "s": "sum(v)",
    "lo": "min(v)",
    "hi": "max(v)",
    "m": "avg(v)",
    "dm": "avg(cast(d AS decimal(10,2)))",
    "ds": "sum(cast(d AS decimal(10,2)))",
    "fs": "sum(f)",
    "band": "bool_and(b)",
    "bor": "bool_or(b)",
    "ev": "every(b)",
    "so": "some(b)",
}


def numbers(count: int) -> list[dict[str, Any]]:
    rng = random.Random(5)
    return [
        {"g": rng.choice(WORDS), "v": rng.randint(-50, 50), "d": f"{rng.randint(0, 999) / 100:.2f}",
         "f": rng.random(), "b": rng.random() < 0.8}
        for _ in range(count)
    ]  # fmt: skip


@pytest.mark.parametrize(
    "after",
    [
        None,  # the sink reads the rows' processor from a column, nothing is moved
        {
            "processor": "map",  # a fused edge that can tell where a row is: the rows are moved
            "params": {
                "select": {**{f: f for f in MERGEABLE}, "key": "key", "at": "spark_partition_id()"}
            },
        },
    ],
)
def test_each_mergeable_aggregation_is_finished_as_merging_would(
    spark: SparkSession, after: dict[str, Any] | None
) -> None:
    body = two_stage(numbers(600), MERGEABLE, after=after)
    assert pregrouped_edges(build_plan(validate_job(JobSpec.model_validate(body)))) == {
        ("accumulate", "combine")
    }
    fused = run(spark, body, pregrouped=True)
    general = run(spark, body, pregrouped=False)
    assert fused.combine == general.combine  # names, order and Spark types
    assert {f.name: f.dataType.simpleString() for f in fused.combine.fields}["ds"] == (
        "decimal(30,2)"  # sum of sums, as merging gives: not the accumulate's decimal(20,2)
    )
    assert len(fused.results) == len(WORDS)
    by_key = {row["key"]: row for row in general.results}
    for row in fused.results:
        assert list(row) == list(by_key[row["key"]])
        for field, value in row.items():
            expected = by_key[row["key"]][field]
            assert type(value) is type(expected), field
            assert value == (pytest.approx(expected) if isinstance(value, float) else expected)
        if after is not None:  # processor g's rows on partition g
            assert row["at"] == processor_of(row["key"])
    assert fused.counts == general.counts
    assert fused.spark_jobs == general.spark_jobs - (1 if after is None else 0)


def test_a_results_cap_that_cuts_a_partition_short_places_the_rows_first(
    spark: SparkSession,
) -> None:
    items = words(1_500, seed=8)
    body = two_stage(items, {"count": "count(*)"})
    keys = len({item["g"] for item in items})
    for cap in (3, keys // 2 + 1):
        fused = run(spark, body, pregrouped=True, results_cap=cap)
        general = run(spark, body, pregrouped=False, results_cap=cap)
        assert len(fused.results) == len(general.results) == cap
        # the first processors' rows, each processor's at most cap, in processor order
        fused_order = [processor_of(row["key"]) for row in fused.results]
        assert fused_order == [processor_of(row["key"]) for row in general.results]
        assert fused_order == sorted(fused_order)
        assert fused.counts == general.counts


def test_several_members_take_the_general_path(spark: SparkSession) -> None:
    items = words(1_000, seed=4)
    body = two_stage(items, {"count": "count(*)"}, members=2)
    plan = build_plan(validate_job(JobSpec.model_validate(body)))
    assert pregrouped_edges(plan) == set()
    result = run(spark, body, pregrouped=True)
    assert {row["key"]: row["count"] for row in result.results} == dict(
        Counter(item["g"] for item in items)
    )
    order = [processor_of(row["key"], 4) for row in result.results]
    assert order == sorted(order)


@pytest.mark.parametrize(
    "change",
    [
        "other_aggregations",
        "unicast_into_accumulate",
        "accumulate_forks",
        "single_stage",
        "other_edge_key",
    ],
)
def test_pregrouped_only_when_every_key_has_one_row(change: str) -> None:
    body = two_stage(words(10), {"count": "count(*)"})
    vertices = {v["name"]: v for v in body["dag"]["vertices"]}
    edges = body["dag"]["edges"]
    if change == "other_aggregations":
        vertices["combine"]["params"]["aggregations"] = {"count": "sum(count)"}
    elif change == "unicast_into_accumulate":
        edges[0].update(routing="unicast", key=None)
    elif change == "accumulate_forks":
        body["dag"]["vertices"].append({"name": "other", "processor": "sink.logger"})
        edges.append({"from": "accumulate", "to": "other", "from_ordinal": 1})
    elif change == "single_stage":
        vertices["accumulate"]["params"]["stage"] = "single"
    else:
        edges[1]["key"] = "upper(key)"
    plan = build_plan(validate_job(JobSpec.model_validate(body)))
    assert pregrouped_edges(plan) == set()


def test_rows_for_a_placement_blind_sink_stay_where_they_are(
    spark: SparkSession, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sink.files`` writes a directory read as a whole: the combine's rows are not moved
    to their processors' partitions for it (an exchange and a Spark job less), and the rows
    written are the same."""
    items = words(2_000)
    expected = Counter(item["g"] for item in items)

    def written(blind: bool) -> tuple[dict[str, int], int]:
        kind = replace(PROCESSORS["sink.files"], placement_blind=blind)
        monkeypatch.setitem(PROCESSORS, "sink.files", kind)
        body = two_stage(items, {"count": "count(*)"})
        out = tmp_path / f"blind-{blind}"
        sink = {"name": "sink", "processor": "sink.files",
                "params": {"path": str(out), "format": "parquet"}}  # fmt: skip
        body["dag"]["vertices"] = [*body["dag"]["vertices"][:3], sink]
        plan = build_plan(validate_job(JobSpec.model_validate(body)), all_to_one_seed=7)
        control = JobControl(job_group=f"test-{uuid.uuid4()}", cancelled=threading.Event())
        _, jobs = executed(spark, plan, control)
        rows = spark.read.parquet(str(out)).collect()
        return {row["key"]: row["count"] for row in rows}, jobs

    blind_rows, blind_jobs = written(True)
    placed_rows, placed_jobs = written(False)
    assert blind_rows == placed_rows == dict(expected)
    assert blind_jobs == placed_jobs - 1
