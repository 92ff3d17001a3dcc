"""The registry of processor kinds holds together: every kind SPEC names is registered, has
one op, and validates, plans and runs.

A new kind adds its body to ``BODIES`` (or a step of ``STEPS``): the coverage test fails
until every registered kind is in one.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis
from pyspark.sql import SparkSession

from jetspark.dag.errors import DagValidationError
from jetspark.dag.kinds import PROCESSORS
from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from tests.engine.conftest import RunDag, job_body, run_runnable
from tests.jdbc.conftest import ALICE, Db, RunJdbc
from tests.kafka.test_broker import create_topic, read_all
from tests.kafka.test_kafka import clusters as kafka_clusters
from tests.kafka.test_kafka import poll as poll_stream
from tests.kafka.test_kafka import produce as produce_numbers
from tests.kafka.test_kafka import run_stream
from tests.kafka.test_kafka import stop as stop_stream
from worker.engine import JobControl, RunnableJob
from worker.engine.contract import RedisTarget
from worker.engine.ops.table import OP_TYPES
from worker.engine.runner import JobCancelled

SPEC = Path(__file__).resolve().parents[2] / "docs" / "SPEC.md"

ITEMS = [{"k": i % 3, "word": f"w{i % 4}", "n": i} for i in range(12)]


def _edge(source: str, to: str, **more: Any) -> dict[str, Any]:
    return {"from": source, "to": to, **more}


BODIES: dict[str, dict[str, Any]] = {
    "transforms": job_body(
        [
            {"name": "in", "processor": "source.items", "params": {"items": ITEMS}},
            {"name": "m", "processor": "map", "params": {"select": {"n": "n", "w": "word"}}},
            {"name": "f", "processor": "filter", "params": {"where": "n >= 2"}},
            {
                "name": "fm",
                "processor": "flat_map",
                "params": {"explode": "array(n, n + 100)", "as": "x"},
            },
            {"name": "s", "processor": "sort", "params": {"by": "x"}},
            {"name": "out", "processor": "sink.results"},
            {"name": "log", "processor": "sink.logger"},
        ],
        [
            _edge("in", "m"),
            _edge("m", "f"),
            _edge("f", "fm"),
            _edge("fm", "s"),
            _edge("s", "out"),
            _edge("s", "log", from_ordinal=1),
        ],
        members=1,
    ),
    "two-stage aggregate over a sequence": job_body(
        [
            {"name": "in", "processor": "source.sequence", "params": {"count": 30}},
            {
                "name": "acc",
                "processor": "aggregate",
                "params": {
                    "key": "seq % 3",
                    "aggregations": {"c": "count(*)"},
                    "stage": "accumulate",
                },
            },
            {
                "name": "comb",
                "processor": "aggregate",
                "params": {"key": "key", "aggregations": {"c": "count(*)"}, "stage": "combine"},
            },
            {"name": "out", "processor": "sink.results"},
        ],
        [
            _edge("in", "acc", routing="partitioned", key="seq % 3"),
            _edge("acc", "comb", routing="partitioned", key="key"),
            _edge("comb", "out"),
        ],
        members=1,
    ),
    "hash join": job_body(
        [
            {
                "name": "build",
                "processor": "source.items",
                "params": {"items": [{"id": 0, "name": "zero"}, {"id": 1, "name": "one"}]},
            },
            {"name": "probe", "processor": "source.items", "params": {"items": ITEMS}},
            {
                "name": "j",
                "processor": "hash_join",
                "params": {"build_key": "id", "probe_key": "k", "how": "left"},
            },
            {"name": "out", "processor": "sink.results"},
        ],
        [
            _edge("build", "j", routing="broadcast", priority=-1),
            _edge("probe", "j", to_ordinal=1),
            _edge("j", "out"),
        ],
        members=1,
    ),
    "event time and a python vertex": job_body(
        [
            {"name": "in", "processor": "source.sequence", "params": {"count": 40}},
            {
                "name": "ev",
                "processor": "map",
                "params": {"select": {"seq": "seq", "ts": "seq * 10"}},
            },
            {"name": "wm", "processor": "insert_watermarks", "params": {"timestamp": "ts"}},
            {
                "name": "py",
                "processor": "python",
                "params": {
                    "class": "jetspark.example_processors.streaming:PassThrough",
                    "args": {"schema": "seq bigint, ts bigint"},
                },
            },
            {
                "name": "win",
                "processor": "window",
                "params": {
                    "timestamp": "ts",
                    "type": "tumbling",
                    "size_ms": 100,
                    "aggregations": {"c": "count(*)"},
                },
            },
            {"name": "out", "processor": "sink.results"},
        ],
        [
            _edge("in", "ev"),
            _edge("ev", "wm"),
            _edge("wm", "py"),
            _edge("py", "win"),
            _edge("win", "out", routing="all_to_one"),
        ],
        members=1,
        local_parallelism=1,
    ),
}


def _files_steps(root: Path) -> list[dict[str, Any]]:
    path = str(root / "kinds-out")
    return [
        job_body(
            [
                {"name": "in", "processor": "source.items", "params": {"items": ITEMS}},
                {"name": "out", "processor": "sink.files",
                 "params": {"path": path, "format": "json"}},
            ],
            [_edge("in", "out")],
        ),
        job_body(
            [
                {"name": "in", "processor": "source.files",
                 "params": {"path": path, "format": "json"}},
                {"name": "out", "processor": "sink.results"},
            ],
            [_edge("in", "out")],
        ),
    ]  # fmt: skip


REDIS_MAP = job_body(
    [
        {"name": "in", "processor": "source.items", "params": {"items": ITEMS}},
        {"name": "out", "processor": "sink.redis_map", "params": {"map": "kinds", "key": "n"}},
    ],
    [_edge("in", "out")],
)


def _stream_body(source: str, target: str) -> dict[str, Any]:
    return job_body(
        [
            {"name": "in", "processor": "source.redis_stream", "params": {"streams": [source]}},
            {"name": "out", "processor": "sink.redis_stream", "params": {"stream": target}},
        ],
        [_edge("in", "out")],
        members=1,
        local_parallelism=1,
    )


def _jdbc_body(source: str, target: str) -> dict[str, Any]:
    return job_body(
        [
            {"name": "in", "processor": "source.jdbc",
             "params": {"connection": "main", "table": source, "where": "n >= 2"}},
            {"name": "out", "processor": "sink.jdbc",
             "params": {"connection": "main", "table": target}},
        ],
        [_edge("in", "out")],
    )  # fmt: skip


def _kafka_body(source: str, target: str) -> dict[str, Any]:
    return job_body(
        [
            {"name": "in", "processor": "source.kafka",
             "params": {"cluster": "events", "topics": [source]}},
            {"name": "out", "processor": "sink.kafka",
             "params": {"cluster": "events", "topic": target}},
        ],
        [_edge("in", "out")],
        epoch_interval_ms=100,
    )  # fmt: skip


def _kinds(body: dict[str, Any]) -> set[str]:
    return {v["processor"] for v in body["dag"]["vertices"]}


def test_every_kind_spec_names_is_registered_with_one_op() -> None:
    named = set(re.findall(r"`((?:source|sink)\.[a-z_]+)`", SPEC.read_text()))
    assert named and named <= set(PROCESSORS)
    assert set(OP_TYPES) == set(PROCESSORS)


def test_every_registered_kind_is_run_here(tmp_path: Path) -> None:
    covered = set().union(*(_kinds(b) for b in BODIES.values()))
    covered |= set().union(*(_kinds(b) for b in _files_steps(tmp_path)))
    covered |= _kinds(REDIS_MAP) | _kinds(_stream_body("a", "b")) | _kinds(_jdbc_body("a", "b"))
    covered |= _kinds(_kafka_body("a", "b"))
    assert covered == set(PROCESSORS)


def test_each_kind_declares_what_it_touches() -> None:
    """Every kind's declared params exist on its params model: a typo is a test failure."""
    for kind in PROCESSORS.values():
        fields = set(kind.params_model.model_fields)
        declared = {*kind.expression_fields, *kind.aggregate_fields, *kind.state_keys}
        declared |= {*kind.resources.paths, *kind.resources.redis_names}
        declared |= set(kind.resources.connections)
        declared |= {*kind.resources.kafka_topics, *filter(None, [kind.resources.kafka_cluster])}
        assert declared <= fields, (kind.name, declared - fields)
        assert kind.resources.kafka_cluster or not kind.resources.kafka_topics, kind.name


def test_the_kafka_kinds_declare_their_cluster_and_topics() -> None:
    """The topic rules (``kafka.clusters.topic_problems``) read these and nothing else."""
    declared = {
        name: (kind.resources.kafka_cluster, kind.resources.kafka_topics)
        for name, kind in PROCESSORS.items()
        if kind.resources.kafka_cluster is not None
    }
    assert declared == {
        "source.kafka": ("cluster", ("topics",)),
        "sink.kafka": ("cluster", ("topic",)),
    }


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(BODIES))
def test_the_kinds_validate_plan_and_run(run_dag: RunDag, name: str) -> None:
    outcome, plan = run_dag(BODIES[name])
    assert outcome.results["out"], name
    assert {v.processor for v in plan.vertices} == _kinds(BODIES[name])
    for sink in outcome.sinks:
        assert outcome.vertex_counts[sink].items_in > 0, (name, sink)


@pytest.mark.spark
def test_the_file_kinds_run(run_dag: RunDag, tmp_path: Path) -> None:
    write, read = _files_steps(tmp_path)
    run_dag(write)
    outcome, _ = run_dag(read)
    assert sorted(r["n"] for r in outcome.results["out"]) == list(range(12))


@pytest.mark.spark
def test_the_redis_kinds_run(
    run_dag: RunDag,
    spark: SparkSession,
    redis_url: str,
    redis_client: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    namespace = f"kinds-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("JETSPARK_REDIS_URL", redis_url)
    monkeypatch.setenv("JETSPARK_REDIS_NAMESPACE", namespace)
    monkeypatch.setenv("JETSPARK_STREAM_EPOCH_INTERVAL_MS", "100")
    target = RedisTarget(redis_url, namespace)
    try:
        run_dag(REDIS_MAP)
        assert len(redis_client.keys(f"*{namespace}*kinds*")) == 1
        redis_client.xadd(target.user_stream("src"), {"v": "1"})
        spec = JobSpec.model_validate(_stream_body("src", "dst"))
        plan = build_plan(validate_job(spec))
        job = RunnableJob(uuid.uuid4(), 1, plan.model_dump(mode="json"))
        control = JobControl(job_group=f"kinds-{job.id}", redis=target)
        ended: list[BaseException] = []

        def run() -> None:
            try:
                run_runnable(spark, job, control)
            except BaseException as error:  # the test reads how it ended
                ended.append(error)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 120
        while not redis_client.xlen(target.user_stream("dst")):
            assert thread.is_alive(), ended
            assert time.monotonic() < deadline, "source.redis_stream -> sink.redis_stream"
            time.sleep(0.05)  # polling the job's output, bounded by the deadline
        control.cancelled.set()
        thread.join(timeout=120)
        assert len(ended) == 1 and isinstance(ended[0], JobCancelled), ended
    finally:
        for key in redis_client.scan_iter(f"*{namespace}*"):
            redis_client.delete(key)


@pytest.mark.spark
def test_the_jdbc_kinds_run(db: Db, run_jdbc: RunJdbc) -> None:
    db.run(f"CREATE TABLE {db.table('src')} AS SELECT g AS n FROM generate_series(0, 11) g")
    run_jdbc(_jdbc_body(db.table("src"), db.table("dst")))
    assert db.rows(f"SELECT n FROM {db.table('dst')} ORDER BY n") == [(n,) for n in range(2, 12)]


@pytest.mark.spark
@pytest.mark.timeout(900)
def test_the_kafka_kinds_run(
    kafka: str, spark: SparkSession, redis_url: str, redis_namespace: str
) -> None:
    source, target = create_topic(kafka), create_topic(kafka)
    produce_numbers(kafka, source, range(12))
    control = JobControl(
        job_group=f"job-{uuid.uuid4()}",
        redis=RedisTarget(redis_url, redis_namespace, ALICE),
        kafka=kafka_clusters(kafka),
    )
    thread, ended = run_stream(spark, _kafka_body(source, target), control)
    try:
        poll_stream(lambda: len(read_all(kafka, target, 3)) >= 12, "records", thread, ended)
    finally:
        stop_stream(control, thread, ended)


def _window_job(params: dict[str, Any]) -> JobSpec:
    window = {"timestamp": "seq", "aggregations": {"c": "count(*)"}, **params}
    return JobSpec.model_validate(
        job_body(
            [
                {"name": "in", "processor": "source.sequence", "params": {"count": 3}},
                {"name": "w", "processor": "window", "params": window},
                {"name": "out", "processor": "sink.results"},
            ],
            [_edge("in", "w"), _edge("w", "out")],
        )
    )


@pytest.mark.parametrize(
    ("params", "refused"),
    [
        ({"type": "tumbling"}, ["size_ms"]),
        ({"type": "tumbling", "size_ms": 10, "slide_ms": 5}, ["slide_ms"]),
        ({"type": "tumbling", "size_ms": 10, "gap_ms": 5}, ["gap_ms"]),
        ({"type": "sliding", "size_ms": 10}, ["slide_ms"]),
        ({"type": "sliding", "slide_ms": 10}, ["size_ms"]),
        ({"type": "sliding", "size_ms": 10, "slide_ms": 5, "gap_ms": 1}, ["gap_ms"]),
        ({"type": "session"}, ["gap_ms"]),
        ({"type": "session", "gap_ms": 10, "size_ms": 5, "slide_ms": 5}, ["size_ms", "slide_ms"]),
        ({"type": "tumbling", "size_ms": 10}, []),
        ({"type": "sliding", "size_ms": 10, "slide_ms": 5}, []),
        ({"type": "session", "gap_ms": 10}, []),
    ],
)
def test_a_window_takes_exactly_its_types_params(
    params: dict[str, Any], refused: list[str]
) -> None:
    """A missing size/gap failed at run time, an extra one was ignored: both are refused."""
    spec = _window_job(params)
    if not refused:
        validate_job(spec)
        return
    with pytest.raises(DagValidationError) as caught:
        validate_job(spec)
    pointers = [problem.pointer for problem in caught.value.problems]
    assert pointers == [f"/dag/vertices/1/params/{f}" for f in refused]
