"""Hostile Redis names: a DAG's maps and streams never reach the server's keys or another
principal's, and the server's readers survive keys planted with the wrong type or content."""

from __future__ import annotations

import copy
import json
import threading
import uuid
from typing import Any

import httpx
import pytest
import redis
from pyspark.sql import SparkSession

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from jetspark.queue.events import EventKind, publish
from jetspark.queue.keys import Keys
from tests.engine.conftest import run_runnable
from tests.security.tenant_stack import Stack, stack_fixture  # noqa: F401
from worker.engine import JobControl, RunnableJob
from worker.engine.contract import RedisTarget


def sink_dag(processor: str, params: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "hostile",
        "dag": {
            "vertices": [
                {"name": "src", "processor": "source.items", "params": {"items": [{"k": "x"}]}},
                {"name": "out", "processor": processor, "params": params},
            ],
            "edges": [{"from": "src", "to": "out"}],
        },
    }


def server_keys(ns: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(what, processor, params) aiming at each kind of key the server keeps for itself."""
    job, keys = uuid.uuid4(), Keys(ns)
    return [
        ("job queue", "sink.redis_stream", {"stream": keys.jobs_stream}),
        ("worker heartbeat", "sink.redis_stream", {"stream": keys.worker_heartbeat("evil")}),
        ("another job's events", "sink.redis_stream", {"stream": keys.job_events(job)}),
        ("reconciler lock", "sink.redis_map", {"map": keys.reconciler_lock, "key": "k"}),
        ("a snapshot", "sink.redis_map", {"map": keys.snapshot_partition(3, job, 1), "key": "k"}),
        ("old-style prefix", "sink.redis_stream", {"stream": f"{ns}:jobs"}),
    ]


def test_names_under_the_servers_prefix_are_refused_naming_the_pointer(
    stack: Stack, redis_namespace: str
) -> None:
    with stack.client("alice") as alice:
        for what, processor, params in server_keys(redis_namespace):
            for path in ("/v1/jobs", "/v1/dags:validate"):
                response = alice.post(path, json=sink_dag(processor, params))
                assert response.status_code == 422, (what, path, response.text)
                param = "stream" if "stream" in params else "map"
                assert response.json()["errors"][0]["pointer"] == f"/dag/vertices/1/params/{param}"
                assert "server's own prefix" in response.json()["errors"][0]["message"]
        source = copy.deepcopy(sink_dag("sink.logger", {}))
        source["dag"]["vertices"][0] = {
            "name": "src",
            "processor": "source.redis_stream",
            "params": {"streams": ["mine", Keys(redis_namespace).jobs_stream]},
        }
        refused = alice.post("/v1/jobs", json=source)
        assert refused.status_code == 422
        assert refused.json()["errors"][0]["pointer"] == "/dag/vertices/0/params/streams/1"


@pytest.mark.spark
def test_each_principals_maps_and_streams_live_under_its_own_prefix(
    spark: SparkSession, redis_url: str, redis_client: redis.Redis
) -> None:
    ns = f"names-{uuid.uuid4().hex[:8]}"
    keys = Keys(ns)
    body = sink_dag("sink.redis_map", {"map": "shared", "key": "k"})
    body["dag"]["vertices"].append(
        {"name": "stream", "processor": "sink.redis_stream", "params": {"stream": "jobs"}}
    )
    body["dag"]["edges"].append({"from": "src", "to": "stream", "from_ordinal": 1})
    try:
        for principal in ("alice", "bob"):
            spec = JobSpec.model_validate(body)
            spec.dag.vertices[0].params["items"] = [{"k": principal}]
            plan = build_plan(validate_job(spec)).model_dump(mode="json")
            job = RunnableJob(id=uuid.uuid4(), attempt=1, plan=plan)
            control = JobControl(
                job_group=f"names-{job.id}",
                cancelled=threading.Event(),
                redis=RedisTarget(redis_url, ns, principal),
            )
            run_runnable(spark, job, control)
        for principal in ("alice", "bob"):
            stored = redis_client.hgetall(keys.redis_map(principal, "shared"))
            assert {k: json.loads(v) for k, v in stored.items()} == {principal: {"k": principal}}
            assert redis_client.xlen(keys.user_stream(principal, "jobs")) == 1
        # The stream named like the job queue is the user's, not the queue.
        assert not redis_client.exists(keys.jobs_stream)
        assert all(k.startswith(f"{ns}:user:") for k in redis_client.scan_iter(f"{ns}:*"))
    finally:
        leftovers = [*redis_client.scan_iter(f"{ns}:*"), *redis_client.scan_iter(f"{{{ns}}}:*")]
        if leftovers:
            redis_client.delete(*leftovers)


def test_planted_keys_of_the_wrong_type_or_content_break_no_reader(
    stack: Stack, redis_client: redis.Redis, redis_namespace: str
) -> None:
    keys = Keys(redis_namespace)
    planted = [keys.worker_heartbeat("stream-here"), keys.worker_heartbeat("not-a-time")]
    redis_client.xadd(planted[0], {"x": "1"})
    redis_client.set(planted[1], "yesterday")
    with stack.client("alice") as alice:
        job_id = alice.post("/v1/jobs", json=sink_dag("sink.logger", {})).json()["id"]
        metrics_key = keys.job_metrics(job_id)
        redis_client.hset(metrics_key, "x", "1")  # a hash where a JSON document belongs
        planted.append(metrics_key)
        events = keys.job_events(job_id)
        planted.append(events)
        try:
            scrape = alice.get("/metrics")
            assert scrape.status_code == 200, scrape.text
            assert 'jetspark_worker_heartbeat_age_seconds{worker="stream-here"}' not in scrape.text
            metrics = alice.get(f"/v1/jobs/{job_id}/metrics")
            assert metrics.status_code == 200 and metrics.json()["vertices"] == {}
            with alice.stream("GET", f"/v1/jobs/{job_id}/events") as response:
                lines = response.iter_lines()
                seen = _events(lines, 1)  # the QUEUED status from PostgreSQL
                assert seen[0][0] == "status"
                # Forged: a status event, an entry without data, an unknown kind; then a real one.
                redis_client.xadd(events, {"kind": "status", "data": '{"to_status":"COMPLETED"}'})
                redis_client.xadd(events, {"kind": "metrics"})
                redis_client.xadd(events, {"kind": "end", "data": "{}"})
                publish(redis_client, keys, uuid.UUID(job_id), EventKind.metrics, {"tick": 1})
                (real,) = _events(lines, 1)
            assert real == ("metrics", {"tick": 1})
        finally:
            redis_client.delete(*planted)
        # A job's event stream of another type: the status events still come, no 500.
        redis_client.set(events, "not a stream")
        try:
            with alice.stream("GET", f"/v1/jobs/{job_id}/events") as response:
                assert response.status_code == 200
                assert _events(response.iter_lines(), 1)[0][0] == "status"
        finally:
            redis_client.delete(events)


def _events(lines: Any, count: int) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    kind = "message"
    for line in lines:
        if line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            found.append((kind, json.loads(line[5:])))
            if len(found) == count:
                return found
    raise AssertionError(f"the stream ended after {found}")


def test_a_scrape_survives_a_planted_heartbeat_even_without_a_token(
    stack: Stack, redis_client: redis.Redis, redis_namespace: str
) -> None:
    key = Keys(redis_namespace).worker_heartbeat("planted")
    redis_client.xadd(key, {"x": "1"})
    try:
        assert httpx.get(f"{stack.url}/metrics", timeout=30).status_code == 200
    finally:
        redis_client.delete(key)
