"""The API while PostgreSQL or Redis is down: 503 problem+json with Retry-After, never a
500 or a hang; submissions accepted while only Redis is down; a bug is a problem+json 500."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from jetspark.settings import ApiSettings
from tests.api.test_events import follow, read_events, take
from tests.faults.conftest import OwnPostgres, OwnRedis
from tests.live_server import live_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

TOKEN = "faults-token"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "word-count.json"


def word_count() -> dict[str, Any]:
    body: dict[str, Any] = json.loads(EXAMPLE.read_text())
    return copy.deepcopy(body)


@pytest.fixture(scope="module")
def app(own_database_url: str, own_redis: OwnRedis) -> FastAPI:
    built = create_app(
        database_url=own_database_url,
        redis_url=own_redis.url,
        redis_namespace="faults-api",
        api_settings=ApiSettings(tokens=[TOKEN]),
    )

    @built.get("/test/boom", include_in_schema=False, operation_id="test-boom")
    def boom() -> None:
        raise RuntimeError("a bug")

    return built


@pytest.fixture(scope="module")
def http(app: FastAPI) -> Iterator[httpx.Client]:
    with live_server(app) as url:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
            yield client


def assert_unavailable(response: httpx.Response, dependency: str) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert int(response.headers["retry-after"]) >= 1
    problem = response.json()
    assert problem["status"] == 503 and dependency in problem["detail"]


def until_unavailable(http: httpx.Client, method: str, path: str, **kw: Any) -> httpx.Response:
    """Ask until the API notices the outage; every answer before is a success, never a 5xx
    other than 503 (a cached job view may still be served for up to a second)."""
    deadline = time.monotonic() + 30
    while True:
        response = http.request(method, path, **kw)
        if response.status_code == 503:
            return response
        assert response.status_code < 500, response.text
        assert time.monotonic() < deadline, "the outage was never noticed"
        time.sleep(0.1)  # polling the API for the outage to show, with a deadline


def test_postgresql_down_is_503_problem_with_retry_after(
    http: httpx.Client, own_postgres: OwnPostgres
) -> None:
    created = http.post("/v1/jobs", json=word_count())
    assert created.status_code == 201, created.text
    job = created.json()["id"]
    own_postgres.stop()
    try:
        started = time.monotonic()
        assert_unavailable(until_unavailable(http, "GET", f"/v1/jobs/{job}"), "PostgreSQL")
        assert_unavailable(http.post("/v1/jobs", json=word_count()), "PostgreSQL")
        assert_unavailable(http.get("/v1/jobs"), "PostgreSQL")
        assert_unavailable(http.post(f"/v1/jobs/{job}/cancel"), "PostgreSQL")
        assert time.monotonic() - started < 25, "an answer waited on the dead server"
        ready = http.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["checks"]["postgresql"].startswith("down")
        assert ready.json()["checks"]["redis"] == "ok"
    finally:
        own_postgres.start()
    deadline = time.monotonic() + 30
    while http.get(f"/v1/jobs/{job}").status_code != 200:
        assert time.monotonic() < deadline, "the API did not come back with PostgreSQL"
        time.sleep(0.1)  # the pool reconnecting, with a deadline
    assert http.get("/readyz").status_code == 200


def test_redis_down_submissions_are_accepted_and_reads_work(
    http: httpx.Client, own_redis: OwnRedis
) -> None:
    accepted: list[str] = []

    def submit_while_down() -> None:
        started = time.monotonic()
        response = http.post("/v1/jobs", json=word_count())
        assert response.status_code == 201, response.text
        accepted.append(response.json()["id"])
        assert time.monotonic() - started < 10, "submission waited on the dead Redis"
        view = http.get(f"/v1/jobs/{accepted[0]}")
        assert view.status_code == 200 and view.json()["status"] == "QUEUED"
        ready = http.get("/readyz")
        assert ready.status_code == 503 and ready.json()["checks"]["redis"].startswith("down")

    own_redis.restart_empty(during=submit_while_down)
    assert accepted and http.get("/readyz").status_code == 200


def test_an_open_event_stream_outlives_a_redis_that_never_comes_back(
    http: httpx.Client, own_redis: OwnRedis
) -> None:
    """The job's status events come from PostgreSQL: with Redis gone for good under an open
    SSE stream, the stream stays open, and a cancel made meanwhile still reaches it and ends
    it (the stream's Redis part is read again at each turn, never fatal)."""
    job_id = http.post("/v1/jobs", json=word_count()).json()["id"]
    try:
        with follow(http, job_id) as response:
            events = read_events(response)
            (queued,) = take(events, 1)
            assert queued.data["to_status"] == "QUEUED"
            own_redis.stop()  # not restarted until the stream has ended
            cancelled = http.post(f"/v1/jobs/{job_id}/cancel")
            assert cancelled.status_code == 200, cancelled.text
            status, end = take(events, 2, deadline_s=60)
        assert status.data["to_status"] == "CANCELLED"
        assert end.kind == "end"
    finally:
        own_redis.start()


def test_an_unexpected_error_is_a_problem_500_with_an_id(http: httpx.Client) -> None:
    response = http.get("/test/boom")
    assert response.status_code == 500
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["status"] == 500 and len(problem["id"]) == 32
    assert problem["id"] in problem["detail"] and "a bug" not in response.text
