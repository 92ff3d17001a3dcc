"""Python processors inside real Spark jobs (shared session, local[2], members 2)."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

import pytest
from pyspark.sql import SparkSession

from jetspark.dag.errors import DagValidationError
from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from jetspark.processor.loading import ProcessorNotAllowed
from tests.engine.conftest import run_runnable
from worker.engine import JobControl, JobOutcome, RunnableJob
from worker.engine.ops.base import OpContext
from worker.engine.ops.python import PythonOp
from worker.engine.runner import VertexFailed

pytestmark = pytest.mark.spark

PROBE = "jetspark.example_processors.diagnostics:PartitionProbe"


def vertex(name: str, processor: str, **params: Any) -> dict[str, Any]:
    return {"name": name, "processor": processor, "params": params}


def python(name: str, cls: str, **args: Any) -> dict[str, Any]:
    return vertex(name, "python", **{"class": cls, "args": args})


def job(vertices: list[dict[str, Any]], edges: list[dict[str, Any]], lp: int = 1) -> JobSpec:
    return JobSpec.model_validate(
        {
            "name": "python-processors",
            "dag": {"vertices": vertices, "edges": edges},
            "config": {"members": 2, "local_parallelism": lp},
        }
    )


def run(spark: SparkSession, spec: JobSpec) -> JobOutcome:
    plan = build_plan(validate_job(spec), all_to_one_seed=1)
    runnable = RunnableJob(id=uuid.uuid4(), attempt=1, plan=plan.model_dump(mode="json"))
    return run_runnable(spark, runnable, JobControl(job_group="python-processors-test"))


def test_a_processor_emits_every_copy_under_outbox_capacity_1_on_its_own_partition(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    ops: list[PythonOp] = []  # the job's own op instance, which keeps its metrics
    original = PythonOp.apply

    def apply(self: PythonOp, ctx: OpContext) -> Any:
        ops.append(self)
        return original(self, ctx)

    monkeypatch.setattr(PythonOp, "apply", apply)
    items = [{"seq": i} for i in range(40)]
    spec = job(
        [
            vertex("numbers", "source.items", items=items),
            python("probe", PROBE, copies=3),
            vertex(
                "where",
                "map",
                select={
                    "seq": "seq",
                    "replica": "replica",
                    "g": "global_index",
                    "task": "spark_partition",
                    "here": "spark_partition_id()",
                },
            ),
            vertex("out", "sink.results"),
        ],
        [
            {
                "from": "numbers",
                "to": "probe",
                "routing": "partitioned",
                "key": "seq",
                "distributed": True,
            },
            {"from": "probe", "to": "where", "config": {"outbox_capacity": 1}},
            {"from": "where", "to": "out"},
        ],
        lp=2,
    )
    rows = run(spark, spec).results["out"]
    assert sorted((r["seq"], r["replica"]) for r in rows) == [
        (i, c) for i in range(40) for c in range(3)
    ]
    assert {r["g"] for r in rows} == {0, 1, 2, 3}  # P = 2 members x 2
    assert all(r["g"] == r["task"] == r["here"] for r in rows)
    metrics = ops[-1].last_metrics("probe")
    assert sum(m["items_out"].get(0, 0) for m in metrics.values()) == 120
    assert sum(m["refusals"] for m in metrics.values()) >= 80  # every second offer refused


def test_two_stage_word_count_with_python_tokenizer_and_accumulators(spark: SparkSession) -> None:
    lines = ["To be or not to be", "that is the question", "", "be quick"]
    spec = job(
        [
            vertex("lines", "source.items", items=[{"line": line} for line in lines]),
            python("tokenize", "jetspark.example_processors.words:Tokenizer"),
            python("accumulate", "jetspark.example_processors.words:Accumulator"),
            python(
                "combine", "jetspark.example_processors.words:Accumulator", key="key", add="count"
            ),
            vertex("out", "sink.results"),
        ],
        [
            {"from": "lines", "to": "tokenize"},
            {"from": "tokenize", "to": "accumulate"},
            {
                "from": "accumulate",
                "to": "combine",
                "routing": "partitioned",
                "key": "key",
                "distributed": True,
            },
            {"from": "combine", "to": "out"},
        ],
        lp=2,
    )
    got = {r["key"]: r["count"] for r in run(spark, spec).results["out"]}
    assert got == dict(Counter(" ".join(lines).lower().split()))


def test_the_lower_priority_number_edge_arrives_in_full_first(spark: SparkSession) -> None:
    table = [{"key": f"k{i}", "value": f"v{i}"} for i in range(30)]
    stream = [{"key": f"k{i % 40}"} for i in range(200)]
    spec = job(
        [
            vertex("table", "source.items", items=table),
            vertex("stream", "source.items", items=stream),
            python("enrich", "jetspark.example_processors.enrich:LookupEnricher"),
            vertex("out", "sink.results"),
        ],
        [
            {
                "from": "stream",
                "to": "enrich",
                "to_ordinal": 1,
                "priority": 1,
                "routing": "partitioned",
                "key": "key",
                "distributed": True,
            },
            {
                "from": "table",
                "to": "enrich",
                "to_ordinal": 0,
                "routing": "broadcast",
                "distributed": True,
            },
            {"from": "enrich", "to": "out"},
        ],
    )
    rows = run(spark, spec).results["out"]
    assert sorted((r["key"], r["value"]) for r in rows) == sorted(
        (s["key"], f"v{s['key'][1:]}" if int(s["key"][1:]) < 30 else None) for s in stream
    )


def test_a_source_processor_with_two_outbound_edges_feeds_each_its_ordinal(
    spark: SparkSession,
) -> None:
    spec = job(
        [
            python("numbers", "jetspark.example_processors.sources:Numbers", count=25),
            vertex("evens", "filter", where="seq % 2 = 0"),
            vertex("all", "sink.results"),
            vertex("some", "sink.results"),
        ],
        [
            {"from": "numbers", "to": "all", "from_ordinal": 0},
            {"from": "numbers", "to": "evens", "from_ordinal": 1},
            {"from": "evens", "to": "some"},
        ],
        lp=2,
    )
    results = run(spark, spec).results
    assert sorted((r["seq"], r["global_index"]) for r in results["all"]) == [
        (i, i % 4) for i in range(25)
    ]
    assert sorted(r["seq"] for r in results["some"]) == list(range(0, 25, 2))
    assert "__ordinal" not in results["all"][0]


def test_a_processor_exception_fails_the_job_naming_vertex_type_and_message(
    spark: SparkSession,
) -> None:
    spec = job(
        [
            vertex("src", "source.items", items=[{"value": "ok"}, {"value": "boom"}]),
            python(
                "picky",
                "jetspark.example_processors.diagnostics:FailOn",
                field="value",
                value="boom",
            ),
            vertex("out", "sink.results"),
        ],
        [{"from": "src", "to": "picky"}, {"from": "picky", "to": "out"}],
    )
    with pytest.raises(VertexFailed) as failure:
        run(spark, spec)
    assert failure.value.vertex == "picky"
    assert failure.value.error_type == "ValueError"
    assert str(failure.value) == "vertex 'picky' failed: ValueError: refusing value='boom'"


def test_a_module_outside_the_allow_list_is_refused_at_validation() -> None:
    spec = job([python("evil", "os:system")], [])
    with pytest.raises(DagValidationError) as failure:
        validate_job(spec)
    assert any("not in the allowed Python modules" in p.message for p in failure.value.problems)


def test_a_module_outside_the_allow_list_is_refused_at_run_time(spark: SparkSession) -> None:
    spec = job([python("gen", "jetspark.example_processors.sources:Numbers", count=3)], [])
    dag = validate_job(spec)
    plan = build_plan(dag)
    context = OpContext(
        spark=spark,
        vertex=plan.vertex("gen"),
        params=dag.params["gen"],
        inputs=[],
        inbound=[],
        senders=[],
        partition_count=plan.partition_count,
        results_cap=10,
        allowed_modules=("mycompany.processors",),  # the worker's setting, not the API's
    )
    with pytest.raises(ProcessorNotAllowed, match=r"jetspark\.example_processors"):
        PythonOp().apply(context)


def test_priority_not_ordinal_decides_which_edge_comes_first(spark: SparkSession) -> None:
    spec = job(
        [
            vertex("table", "source.items", items=[{"key": "k", "value": "v"}]),
            vertex("stream", "source.items", items=[{"key": "k"}] * 4),
            python("enrich", "jetspark.example_processors.enrich:LookupEnricher"),
            vertex("out", "sink.results"),
        ],
        [
            {
                "from": "stream",
                "to": "enrich",
                "to_ordinal": 1,
                "priority": -1,
                "routing": "all_to_one",
                "distributed": True,
            },
            {
                "from": "table",
                "to": "enrich",
                "to_ordinal": 0,
                "routing": "broadcast",
                "distributed": True,
            },
            {"from": "enrich", "to": "out"},
        ],
    )
    with pytest.raises(VertexFailed, match="PriorityViolation: table item"):
        run(spark, spec)
