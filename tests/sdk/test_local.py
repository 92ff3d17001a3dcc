"""``run_local`` on the session's SparkSession: the workers' engine, no servers."""

from __future__ import annotations

from collections import Counter

import pytest
from pyspark.sql import SparkSession

from jetspark.dag.plan import ExecutionPlan, build_plan
from jetspark.dag.validate import ValidatedDag
from jetspark.jobs import accept as accept_module
from jetspark.sdk import DAG, Edge
from worker.engine.runner import VertexFailed
from worker.local_run import run_local

pytestmark = pytest.mark.spark

TEXT = ["to be or not to be", "that is the question", "to be is to do"]


def word_count() -> DAG:
    dag = DAG("word-count", {"members": 2})
    lines = dag.new_vertex("lines", "source.items", items=[{"line": t} for t in TEXT])
    tok = dag.new_vertex("tokenize", "flat_map", explode="split(line, ' ')", **{"as": "word"})
    count = dag.new_vertex("count", "aggregate", key="word", aggregations={"n": "count(*)"})
    out = dag.new_vertex("out", "sink.results")
    dag.edge(Edge.between(lines, tok))
    dag.edge(Edge.between(tok, count).partitioned("word").distributed())
    dag.edge(Edge.between(count, out))
    return dag


def test_run_local_of_the_word_count_equals_a_counter(spark: SparkSession) -> None:
    run = run_local(word_count(), spark=spark)
    expected = Counter(word for line in TEXT for word in line.split())
    assert {item["key"]: item["n"] for item in run.items("out")} == expected
    assert run.counts["lines"] == (0, len(TEXT))
    assert run.counts["out"][0] == len(expected)
    frame = run.to_pandas("out")
    assert dict(zip(frame["key"], frame["n"], strict=True)) == expected


def test_a_failing_vertex_raises_naming_it(spark: SparkSession) -> None:
    dag = DAG("fails")
    # Submission checks the fields an expression reads, not their types: Spark's analysis
    # refuses size() of a string when the vertex's frame is made.
    items = dag.new_vertex("items", "source.items", items=[{"a": "x"}])
    boom = dag.new_vertex("boom", "map", select={"b": "size(a)"})
    dag.edge(Edge.between(items, boom)).edge(Edge.between(boom, dag.new_vertex("o", "sink.logger")))
    with pytest.raises(VertexFailed, match="vertex 'boom' failed"):
        run_local(dag, spark=spark)


def test_run_local_plans_the_dag_once_on_the_accept_path(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``DAG.validate()`` goes through ``accept``, which plans: the run uses that plan.
    planned: list[str] = []

    def counting(dag: ValidatedDag, *, all_to_one_seed: int | None = None) -> ExecutionPlan:
        planned.append(dag.spec.name)
        return build_plan(dag, all_to_one_seed=all_to_one_seed)

    monkeypatch.setattr(accept_module, "build_plan", counting)
    run = run_local(word_count(), spark=spark)
    assert planned == ["word-count"]
    assert run.items("out")
