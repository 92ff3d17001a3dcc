"""``/metrics``: request counts by route template, jobs by status, worker heartbeats."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import redis
from prometheus_client.parser import text_string_to_metric_families

from jetspark.queue.keys import Keys


def scrape(api_url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(f"{api_url}/metrics", timeout=10).text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_metrics_count_requests_by_route_template_and_jobs_by_status(
    http: httpx.Client, api_url: str, word_count: dict[str, Any]
) -> None:
    before = scrape(api_url)
    job_id = http.post("/v1/jobs", json=word_count).json()["id"]
    http.post(f"/v1/jobs/{job_id}/cancel")
    for _ in range(3):
        assert http.get(f"/v1/jobs/{job_id}").status_code == 200
    assert http.get(f"/v1/jobs/{uuid.uuid4()}").status_code == 404
    after = scrape(api_url)

    def grew(route: str, status: str) -> float:
        key = (
            "jetspark_http_requests_total",
            (("method", "GET"), ("route", route), ("status", status)),
        )
        return after.get(key, 0) - before.get(key, 0)

    assert grew("/v1/jobs/{job_id}", "200") == 3
    assert grew("/v1/jobs/{job_id}", "404") == 1
    cancelled = ("jetspark_jobs", (("status", "CANCELLED"),))
    assert after[cancelled] - before.get(cancelled, 0) >= 1
    assert all(("jetspark_jobs", (("status", s),)) in after for s in ("QUEUED", "RUNNING"))


def test_metrics_show_each_workers_heartbeat_age(
    api_url: str, redis_client: redis.Redis, redis_namespace: str
) -> None:
    worker = f"host:{uuid.uuid4().hex[:6]}"
    key = Keys(redis_namespace).worker_heartbeat(worker)
    redis_client.set(key, str(time.time() - 5), ex=60)
    try:
        samples = scrape(api_url)
    finally:
        redis_client.delete(key)
    age = samples[("jetspark_worker_heartbeat_age_seconds", (("worker", worker),))]
    assert 4 <= age < 60


def test_metrics_need_no_token(api_url: str) -> None:
    response = httpx.get(f"{api_url}/metrics", timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
