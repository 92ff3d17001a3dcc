"""A job's finished Spark queries read back as pipelines (``worker/spark_pipelines.py``):
real queries on the session's SparkSession, cut at their exchanges, each piece with the
vertices its observations name and the stage Spark ran it in."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from worker.engine.observed import ObservedAggregates
from worker.engine.work_names import (
    described_vertex,
    job_description,
    observation_name,
    vertex_actions,
)
from worker.spark_pipelines import PipelineRun, SparkPipelines, pipelines

pytestmark = pytest.mark.spark


@pytest.fixture
def described(spark: SparkSession) -> Iterator[str]:
    """This thread's Spark work carries a job's description, as a worker's job thread's."""
    context = spark.sparkContext
    description = job_description(uuid.uuid4())
    context.setJobGroup(f"pipelines-{uuid.uuid4().hex[:8]}", description, True)
    yield description
    context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    context.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]


def named(frame: DataFrame, vertex: str) -> DataFrame:
    return ObservedAggregates(frame, {"n": F.count(F.lit(1))}, vertex=vertex).frame


def by_vertices(runs: list[PipelineRun]) -> dict[frozenset[str], list[PipelineRun]]:
    found: dict[frozenset[str], list[PipelineRun]] = {}
    for run in runs:
        found.setdefault(run.vertices, []).append(run)
    return found


def test_a_query_is_read_as_its_pipelines_with_their_vertices_and_stages(
    spark: SparkSession, described: str
) -> None:
    reader = SparkPipelines(spark, described)
    frame = named(spark.range(0, 50_000, numPartitions=2), "numbers")
    frame = named(frame.select("id", F.sha2(F.col("id").cast("string"), 256).alias("h")), "hash")
    grouped = frame.repartition(3, "id").groupBy((F.col("id") % 7).alias("k")).count()
    with vertex_actions(spark.sparkContext, "out"):
        grouped.write.format("noop").mode("overwrite").save()
    spark.range(10).count()  # another query of the same job: no vertex, nothing to read

    runs = by_vertices(reader.drain())  # as the final read: the stores may still be settling
    first = runs[frozenset({"numbers", "hash"})]
    assert len(first) == 1 and first[0].tasks == 2 and first[0].run_ms > 0
    # after the exchange: the grouping's two stages, the last one the sink's query's end
    after = runs[frozenset({"out"})]
    assert len(after) == 2 and len(runs) == 2
    assert first[0].ended_ms <= min(r.started_ms for r in after)
    ends = {r.query_ended_ms for r in [*first, *after]}
    assert ends == {max(r.ended_ms for r in after)}
    assert len({r.stage for r in [*first, *after]}) == 3
    assert reader.poll() == []  # each query read once


def test_another_jobs_queries_and_unfinished_ones_are_not_read(
    spark: SparkSession, described: str
) -> None:
    reader = SparkPipelines(spark, described)
    other = SparkPipelines(spark, job_description(uuid.uuid4()))
    other.poll()
    with vertex_actions(spark.sparkContext, "count"):
        named(spark.range(0, 1000, numPartitions=2), "numbers").count()
    assert {v for r in reader.drain() for v in r.vertices} == {"numbers", "count"}
    assert other.poll() == []


def held_until(gate: Path) -> Column:
    """A column whose tasks wait (60 s at most) for ``gate`` to exist: a query held running."""

    @F.udf("long")
    def held(value: int) -> int:
        import os
        import time

        deadline = time.monotonic() + 60
        while not os.path.exists(gate) and time.monotonic() < deadline:
            time.sleep(0.01)
        return value

    return held(F.col("id"))


def test_drain_waits_for_a_query_still_running_and_reads_it_once_it_ends(
    spark: SparkSession, described: str, tmp_path: Path
) -> None:
    reader = SparkPipelines(spark, described)
    gate = tmp_path / "gate"
    context = spark.sparkContext
    group = context.getLocalProperty("spark.jobGroup.id")

    def run() -> None:  # the job's last query, on a thread that carries the job's description
        context.setJobGroup(group or "held", described, True)
        with vertex_actions(context, "out"):
            named(
                spark.range(0, 4, numPartitions=2).select(held_until(gate).alias("id")), "a"
            ).write.format("noop").mode("overwrite").save()

    query = threading.Thread(target=run)
    query.start()
    deadline = time.monotonic() + 60
    while not reader.waiting and time.monotonic() < deadline:  # listed, not finished
        assert reader.poll() == []
    assert reader.waiting, "the held query was never listed"

    polled = reader.poll

    def poll_then_release() -> list[PipelineRun]:
        runs = polled()
        gate.touch()  # the query ends only after drain's first read found it running
        return runs

    reader.poll = poll_then_release  # type: ignore[method-assign]
    try:
        runs = reader.drain(timeout_s=60)
    finally:
        query.join(timeout=60)
    assert {v for r in runs for v in r.vertices} == {"a", "out"}
    assert not reader.waiting


def test_a_query_description_names_its_job_and_the_vertex_that_ran_it() -> None:
    job = job_description("j1")
    assert described_vertex(job, job) == (True, None)
    assert described_vertex(f"{job} · vertex a · vertex b", job) == (True, "a · vertex b")
    assert described_vertex(job_description("j10"), job) == (False, None)
    assert described_vertex("jetspark snapshot", job) == (False, None)


def test_a_plan_deeper_than_pythons_recursion_limit_is_cut_at_its_exchange() -> None:
    depth = 3000
    nodes: list[dict[str, object]] = [
        {"id": i, "name": "Project", "desc": ""} for i in range(depth)
    ]
    nodes[10] = {"id": 10, "name": "Exchange", "desc": "Exchange hashpartitioning(k, 2)"}
    nodes[5] = {
        "id": 5,
        "name": "CollectMetrics",
        "desc": f"CollectMetrics {observation_name('b')}, [n]",
    }
    nodes[20] = {
        "id": 20,
        "name": "CollectMetrics",
        "desc": f"CollectMetrics {observation_name('a')}, [n]",
    }
    nodes[depth - 1]["metrics"] = [{"name": "duration", "accumulatorId": 7}]
    graph = {"nodes": nodes, "edges": [{"fromId": i + 1, "toId": i} for i in range(depth - 1)]}
    values = {
        "7": "total (min, med, max (stageId: taskId))\n5 ms (1 ms, 2 ms, 3 ms (stage 4.0: task 9))"
    }
    below, above = pipelines(graph, values, [4, 6], "out")
    assert (below.vertices, below.stages, below.depth) == ({"a"}, {4}, 1)
    assert (above.vertices, above.stages, above.depth) == ({"b", "out"}, {6}, 0)
    assert len(below.nodes) == depth - 11 and len(above.nodes) == 11


def collect_metrics(frame: DataFrame) -> int:
    """How many observation operators Spark runs for ``frame``."""
    java: Any = frame._jdf  # py4j
    return str(java.queryExecution().executedPlan().toString()).count("CollectMetrics")


def test_aggregates_asked_for_on_an_observed_frame_are_one_operator_naming_both(
    spark: SparkSession, described: str
) -> None:
    """A source's count and its receiver's tops over the same items: one operator (each
    breaks code generation), each reader its own values, the work told as both vertices'."""
    reader = SparkPipelines(spark, described)
    numbers = spark.range(0, 1000, numPartitions=2)
    counted = ObservedAggregates(numbers, {"n": F.count(F.lit(1))}, vertex="numbers")
    tops = ObservedAggregates(counted.frame, {"n": F.max("id")}, vertex="stamped")
    assert collect_metrics(tops.frame) == 1
    with vertex_actions(spark.sparkContext, "out"):
        tops.frame.write.format("noop").mode("overwrite").save()
    assert counted.values() == {"n": 1000}
    assert tops.values() == {"n": 999}
    assert frozenset({"numbers", "stamped", "out"}) in by_vertices(reader.drain())


def test_an_observed_frame_already_computed_is_observed_again_on_top(
    spark: SparkSession,
) -> None:
    numbers = spark.range(0, 100, numPartitions=2)
    counted = ObservedAggregates(numbers, {"n": F.count(F.lit(1))}, vertex="numbers")
    counted.frame.write.format("noop").mode("overwrite").save()
    tops = ObservedAggregates(counted.frame, {"top": F.max("id")}, vertex="stamped")
    assert collect_metrics(tops.frame) == 2
    assert tops.values() == {"top": 99}
    assert counted.values() == {"n": 100}
