"""Live metrics end to end: a real worker runs Python processors on Spark, the API serves
what they report. A slow sink makes the vertex feeding it wait (backpressure ``high``), the
document stays fresh while the job runs, and the final one is kept in PostgreSQL."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from api.app import create_app
from jetspark.db.tables import Job
from jetspark.metrics.report import now_ms
from jetspark.queue.keys import Keys
from jetspark.settings import ApiSettings, TenantSettings
from jetspark.tenants.principals import LOCAL, bare_token_name
from tests.api.test_prometheus import scrape
from tests.live_server import live_server
from tests.worker.conftest import status_of
from worker.loop import Worker

pytestmark = pytest.mark.spark

TOKEN = "live-metrics-token"
PACING = "jetspark.example_processors.pacing"


def paced_job(count: int, *, pad_bytes: int, per_item_ms: float) -> dict[str, Any]:
    """numbers -(distributed)-> pad -(local, fused)-> slow: pad and slow share a Spark task
    chain, so pad can hand its output on only as fast as slow takes it."""
    return {
        "name": "paced",
        "dag": {
            "vertices": [
                {"name": "numbers", "processor": "source.sequence", "params": {"count": count}},
                {
                    "name": "pad",
                    "processor": "python",
                    "params": {"class": f"{PACING}:Padded", "args": {"bytes": pad_bytes}},
                },
                {
                    "name": "slow",
                    "processor": "python",
                    "params": {"class": f"{PACING}:SlowSink", "args": {"per_item_ms": per_item_ms}},
                },
            ],
            "edges": [
                {"from": "numbers", "to": "pad", "distributed": True},
                {"from": "pad", "to": "slow"},
            ],
        },
        "config": {"members": 1, "local_parallelism": 1},
    }


@pytest.fixture(scope="module")
def keys(redis_namespace: str) -> Keys:
    """One namespace for the module: the API below reads what the workers write."""
    return Keys(f"{redis_namespace}-live-{uuid.uuid4().hex[:6]}")


@pytest.fixture(scope="module")
def http(worker_db_engine: Engine, redis_url: str, keys: Keys) -> Iterator[httpx.Client]:
    app = create_app(
        database_url=worker_db_engine.url.render_as_string(hide_password=False),
        redis_url=redis_url,
        redis_namespace=keys.namespace,
        api_settings=ApiSettings(tokens=[TOKEN]),
        # Jobs are submitted in-process (as LOCAL): the reader is an admin to see them.
        tenant_settings=TenantSettings(api_admins=[bare_token_name(TOKEN)]),
    )
    with live_server(app) as url:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
            yield client


@pytest.fixture(autouse=True)
def tasks_report_to_redis(monkeypatch: pytest.MonkeyPatch, redis_url: str) -> None:
    """Spark tasks find Redis as in production: ``JETSPARK_REDIS_URL``."""
    monkeypatch.setenv("JETSPARK_REDIS_URL", redis_url)


def poll(worker: Worker, check: Callable[[], bool], *, deadline_s: float, what: str) -> None:
    """Step the worker (claims, heartbeats) until ``check()``; fail after the deadline."""
    deadline = time.monotonic() + deadline_s
    while not check():
        assert time.monotonic() < deadline, f"not reached within {deadline_s}s: {what}"
        worker.step()


def test_a_slow_sink_shows_high_backpressure_on_the_vertex_feeding_it_while_running(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    http: httpx.Client,
) -> None:
    worker = make_worker("metrics-slow")
    job_id = submit(paced_job(10**6, pad_bytes=2000, per_item_ms=1))
    seen: dict[str, Any] = {}
    ages: list[int] = []

    def high_while_running() -> bool:
        asked = now_ms()
        doc = http.get(f"/v1/jobs/{job_id}/metrics").json()
        running = status_of(sessions, job_id) == "RUNNING"  # read after the document
        if running and doc["vertices"]:
            ages.append(asked - doc["at_ms"])
            seen.update(doc)
        return (
            running
            and seen.get("vertices", {}).get("pad", {}).get("backpressure_level") == "high"
            and seen["vertices"]["slow"]["items_in"] > 0
            and len(ages) >= 10
        )

    poll(worker, high_while_running, deadline_s=240, what="pad's backpressure high")
    vertices = seen["vertices"]
    levels = {name: v["backpressure_level"] for name, v in vertices.items()}
    assert levels == {"numbers": "ok", "pad": "high", "slow": "ok"}
    assert vertices["pad"]["processors"][0]["index"] == 0
    assert vertices["slow"]["busy_ratio"] > 0 and vertices["slow"]["queue_capacity"] == 1024
    # Written every 0.5 s: fresh as a rule, and never stale by seconds (a loaded machine may
    # hold one write back a little).
    assert sorted(ages)[len(ages) // 2] <= 1000, f"documents older than 1 s while running: {ages}"
    assert max(ages) <= 5000, f"a document older than 5 s while running: {ages}"

    gauges = scrape(str(http.base_url).rstrip("/"))
    ratio = ("jetspark_job_vertex_backpressure_ratio", (("job", str(job_id)), ("vertex", "pad")))
    assert gauges[ratio] >= 0.5

    assert http.post(f"/v1/jobs/{job_id}/cancel").status_code == 200

    def kept() -> dict[str, Any] | None:
        with sessions() as session:
            job = session.get(Job, job_id)
            assert job is not None and job.status == "CANCELLED"
            return job.metrics

    poll(worker, lambda: kept() is not None, deadline_s=60, what="the cancelled job's metrics")
    final = http.get(f"/v1/jobs/{job_id}/metrics").json()
    assert final == kept() and final["final"] is True
    assert final["vertices"]["pad"]["items_out"] >= seen["vertices"]["pad"]["items_out"]


def test_final_metrics_are_served_from_postgres_after_completion(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    http: httpx.Client,
    redis_client: redis.Redis,
    keys: Keys,
) -> None:
    worker = make_worker("metrics-final")
    job_id = submit(paced_job(3000, pad_bytes=10, per_item_ms=0))
    poll(
        worker,
        lambda: status_of(sessions, job_id) in {"COMPLETED", "FAILED"},
        deadline_s=180,
        what="the job's end",
    )
    assert status_of(sessions, job_id) == "COMPLETED"
    redis_client.delete(keys.job_metrics(job_id))  # what is served now comes from PostgreSQL
    doc = http.get(f"/v1/jobs/{job_id}/metrics").json()
    assert doc["final"] is True and doc["job_id"] == str(job_id)
    pad, slow = doc["vertices"]["pad"], doc["vertices"]["slow"]
    assert (pad["items_in"], pad["items_out"], slow["items_in"]) == (3000, 3000, 3000)
    assert pad["received_by_ordinal"] == {"0": 3000} and pad["emitted_by_ordinal"] == {"0": 3000}
    assert [p["index"] for p in slow["processors"]] == [0]
    assert doc["vertices"]["numbers"]["items_out"] == 3000
    watermarks = http.get(f"/v1/jobs/{job_id}/watermarks").json()
    assert [v["vertex"] for v in watermarks["vertices"]] == ["numbers", "pad", "slow"]
    assert watermarks["vertices"][2]["held_back_by"]["vertex"] == "pad"


def idle_stream_job(streams: list[str]) -> dict[str, Any]:
    """Two Redis streams read by two processors; processor 1's stream never speaks."""
    return {
        "name": "idle input",
        "dag": {
            "vertices": [
                {
                    "name": "entries",
                    "processor": "source.redis_stream",
                    "params": {"streams": streams},
                },
                {
                    "name": "stamped",
                    "processor": "insert_watermarks",
                    "params": {"timestamp": "ts", "allowed_lag_ms": 0, "idle_timeout_ms": 300},
                },
                {"name": "ids", "processor": "map", "params": {"select": {"id": "id"}}},
                {"name": "log", "processor": "sink.logger"},
            ],
            "edges": [
                {"from": "entries", "to": "stamped"},
                {"from": "stamped", "to": "ids"},
                {"from": "ids", "to": "log"},
            ],
        },
        "config": {"members": 1, "local_parallelism": 2},
    }


def test_the_watermarks_endpoint_names_a_source_input_held_idle(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    http: httpx.Client,
    redis_client: redis.Redis,
    keys: Keys,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_EPOCH_INTERVAL_MS", "200")
    busy, quiet = (f"idle-test-{uuid.uuid4().hex[:6]}-{n}" for n in ("busy", "quiet"))
    worker = make_worker("metrics-idle")
    job_id = submit(idle_stream_job([busy, quiet]))
    # The job reads its streams under its owner's prefix (submitted in-process: LOCAL).
    busy_key, quiet_key = (keys.user_stream(LOCAL.name, name) for name in (busy, quiet))
    found: dict[str, Any] = {}

    def idle_named() -> bool:
        redis_client.xadd(busy_key, {"n": "1"})  # the busy stream keeps speaking
        report = http.get(f"/v1/jobs/{job_id}/watermarks")
        if report.status_code != 200:
            return False
        ids = next((v for v in report.json()["vertices"] if v["vertex"] == "ids"), None)
        if ids is None or not ids["idle_inputs"]:
            return False
        found.update(ids)
        return True

    poll(worker, idle_named, deadline_s=240, what="the idle input named")
    assert found["idle_inputs"][0]["vertex"] == "stamped"
    assert found["idle_inputs"][0]["processors"] == [1]
    held = [p["held_back_by"] for p in found["processors"] if p["held_back_by"]]
    assert {"vertex": "stamped", "processor": 0} in [
        {"vertex": h.get("vertex"), "processor": h.get("processor")} for h in held
    ]
    assert http.post(f"/v1/jobs/{job_id}/cancel").status_code == 200
    redis_client.delete(busy_key, quiet_key)


def hashing_job(source: dict[str, Any], *, field: str, expensive: bool) -> dict[str, Any]:
    """numbers -(partitioned, distributed: its own Spark stage)-> hash -> kept -> out. An
    expensive ``hash`` computes an edit distance between strings of some 370 and 200
    characters per item (about 0.4 ms of a core); a cheap one takes the field's length.
    ``kept`` drops every item (``kept`` and ``out`` are fused into hash's Spark stage)."""
    text = f"cast({field} as string)"
    work = f"levenshtein(repeat({text}, 64), repeat('ab', 100))" if expensive else f"length({text})"
    return {
        "name": "hashing",
        "dag": {
            "vertices": [
                {"name": "numbers", **source},
                {"name": "hash", "processor": "map", "params": {"select": {"d": work}}},
                {"name": "kept", "processor": "filter", "params": {"where": "d < 0"}},
                {"name": "out", "processor": "sink.results"},
            ],
            "edges": [
                {
                    "from": "numbers",
                    "to": "hash",
                    "routing": "partitioned",
                    "key": field,
                    "distributed": True,
                },
                {"from": "hash", "to": "kept"},
                {"from": "kept", "to": "out"},
            ],
        },
        "config": {"members": 1, "local_parallelism": 2},
    }


def test_an_expensive_built_in_vertex_is_the_busy_bottleneck_holding_its_source_back(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    http: httpx.Client,
    tmp_path: Path,
) -> None:
    worker = make_worker("metrics-bottleneck")
    lines = tmp_path / "numbers.txt"
    lines.write_text("".join(f"{n}\n" for n in range(100_000)))
    files = {"processor": "source.files", "params": {"path": str(lines), "format": "text"}}
    job_id = submit(hashing_job(files, field="line", expensive=True))
    poll(
        worker,
        lambda: status_of(sessions, job_id) in {"COMPLETED", "FAILED"},
        deadline_s=300,
        what="the job's end",
    )
    assert status_of(sessions, job_id) == "COMPLETED"
    vertices = http.get(f"/v1/jobs/{job_id}/metrics").json()["vertices"]
    hashing, numbers = vertices["hash"], vertices["numbers"]
    assert hashing["processors"] == []  # a built-in vertex: Spark's metrics, not a report
    assert hashing["busy_ratio"] >= 0.8 and hashing["bottleneck"] is True
    assert hashing["backpressure_level"] == "ok"
    # fused into hash's Spark stage, kept and out share its time (as Flink's chained operators)
    assert vertices["kept"]["bottleneck"] is True and vertices["out"]["bottleneck"] is True
    assert numbers["busy_ratio"] < 0.3 and numbers["bottleneck"] is False
    assert numbers["backpressure_ratio"] >= 0.5 and numbers["backpressure_level"] == "high"


def test_a_cheap_stream_that_keeps_its_pace_is_ok_everywhere(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    http: httpx.Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_EPOCH_INTERVAL_MS", "1000")
    worker = make_worker("metrics-cheap")
    numbers = {"processor": "source.sequence", "params": {"count": None, "rate_per_s": 2000}}
    job_id = submit(hashing_job(numbers, field="seq", expensive=False))
    seen: dict[str, Any] = {}

    def measured() -> bool:
        doc = http.get(f"/v1/jobs/{job_id}/metrics").json()
        vertices = doc.get("vertices") or {}
        if not all(vertices.get(n, {}).get("busy_ratio", 0) > 0 for n in ("numbers", "hash")):
            return False
        seen.clear()
        seen.update(vertices)
        # The window (10 s) past the first epochs, which start Python's workers; an epoch a
        # loaded machine held back is behind its pace for a while, and then catches up.
        return doc.get("epoch") is not None and doc["epoch"] >= 12 and keeps_pace(seen)

    def keeps_pace(vertices: dict[str, Any]) -> bool:
        return all(
            v["backpressure_level"] == "ok" and not v["bottleneck"] and v["busy_ratio"] < 0.5
            for v in vertices.values()
        )

    poll(worker, measured, deadline_s=240, what="twelve epochs measured, every vertex at ease")
    assert set(seen) == {"numbers", "hash", "kept", "out"}, seen
    gauges = scrape(str(http.base_url).rstrip("/"))
    labels = (("job", str(job_id)), ("vertex", "hash"))
    assert 0 < gauges[("jetspark_job_vertex_busy_ratio", labels)] < 0.5
    assert gauges[("jetspark_job_vertex_bottleneck", labels)] == 0
    assert http.post(f"/v1/jobs/{job_id}/cancel").status_code == 200
