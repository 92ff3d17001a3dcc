"""``/v1/jobs/{id}/metrics`` and ``/watermarks`` over HTTP, with documents published the way
workers publish them (no worker runs here)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest
import redis

from jetspark.metrics.report import JobMetrics, MetricsPublisher, ProcessorMetrics, aggregate_vertex
from jetspark.queue.keys import Keys
from tests.metrics.test_watermarks import TWO_INPUTS


@pytest.fixture
def queued_job(http: httpx.Client) -> Iterator[str]:
    job_id = str(http.post("/v1/jobs", json=TWO_INPUTS).json()["id"])
    yield job_id
    http.post(f"/v1/jobs/{job_id}/cancel")


def test_an_unknown_job_is_a_404_problem(http: httpx.Client) -> None:
    for path in ("metrics", "watermarks"):
        response = http.get(f"/v1/jobs/{uuid.uuid4()}/{path}")
        assert response.status_code == 404
        assert response.headers["content-type"] == "application/problem+json"


def test_a_job_without_metrics_yet_has_an_empty_vertices_map(
    http: httpx.Client, queued_job: str
) -> None:
    doc = http.get(f"/v1/jobs/{queued_job}/metrics").json()
    assert doc["vertices"] == {} and doc["job_id"] == queued_job and doc["final"] is False


def test_watermarks_name_the_holding_processor_and_the_idle_input(
    http: httpx.Client, queued_job: str, redis_client: redis.Redis, redis_namespace: str
) -> None:
    job_id = uuid.UUID(queued_job)
    a = [ProcessorMetrics(index=g, member=g // 2, last_forwarded_wm=1000 - g) for g in range(4)]
    b = [ProcessorMetrics(index=g, member=g // 2, idle=True) for g in range(4)]
    out = [ProcessorMetrics(index=g, member=g // 2, coalesced_wm=997) for g in range(4)]
    doc = JobMetrics(
        job_id=job_id,
        at_ms=1,
        vertices={
            "a": aggregate_vertex(a),
            "b": aggregate_vertex(b),
            "out": aggregate_vertex(out),
        },
    )
    MetricsPublisher(redis_client, Keys(redis_namespace)).publish(doc)
    assert http.get(f"/v1/jobs/{job_id}/metrics").json()["vertices"]["out"]["coalesced_wm"] == 997
    report = http.get(f"/v1/jobs/{job_id}/watermarks").json()
    out_view = next(v for v in report["vertices"] if v["vertex"] == "out")
    assert out_view["held_back_by"] == {
        "idle": False,
        "vertex": "a",
        "processor": 3,
        "member": 1,
        "last_forwarded_wm": 997,
    }
    assert out_view["idle_inputs"] == [
        {"idle": True, "vertex": "b", "ordinal": 1, "processors": [0, 1, 2, 3]}
    ]
    assert out_view["skew_ms"] == 3
    assert out_view["lag_ms"] is None  # event time in 1970: no lag against the wall clock
