"""End to end through the generated client (clients.jetspark_client) against the live uvicorn.

test_jobs.py asserts the same behaviours with raw httpx; here the point is that the client
generated from the committed document can express them: its models parse every answer, its
header parameters (Idempotency-Key, If-None-Match) reach the server, and documented statuses
(201/200, 304, 409, 422) come back typed. ``raise_on_unexpected_status`` turns any status the
document does not list into an exception.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import mmh3
import pytest
from fastapi import FastAPI

from api.app import create_app
from clients.jetspark_client import AuthenticatedClient, Client
from clients.jetspark_client.api.dags import dags_validate
from clients.jetspark_client.api.health import health_live, health_ready
from clients.jetspark_client.api.jobs import (
    jobs_cancel,
    jobs_get,
    jobs_list,
    jobs_restart,
    jobs_results,
    jobs_resume,
    jobs_submit,
    jobs_suspend,
)
from clients.jetspark_client.api.partitions import partitions_get
from clients.jetspark_client.models import (
    Health,
    HealthChecks,
    JobPage,
    JobSpec,
    JobStatus,
    JobView,
    PartitionsGetKeyType,
    PartitionView,
    ProblemDetail,
    ResultPage,
    ValidationReport,
)
from tests.api.conftest import TOKEN
from tests.api.leftovers import no_leftovers
from tests.live_server import live_server

pytestmark = pytest.mark.usefixtures(no_leftovers.__name__)


@pytest.fixture
def client(api_url: str) -> Iterator[AuthenticatedClient]:
    with AuthenticatedClient(
        base_url=api_url,
        token=TOKEN,
        timeout=httpx.Timeout(30.0),
        raise_on_unexpected_status=True,
    ) as generated:
        yield generated


def spec(body: dict[str, Any], name: str | None = None) -> JobSpec:
    return JobSpec.from_dict({**body, "name": name} if name else body)


def submit(client: AuthenticatedClient, body: dict[str, Any], name: str | None = None) -> JobView:
    job = jobs_submit.sync(client=client, body=spec(body, name))
    assert isinstance(job, JobView), job
    return job


def test_submit_is_201_with_location_and_a_typed_job(
    client: AuthenticatedClient, word_count: dict[str, Any]
) -> None:
    response = jobs_submit.sync_detailed(client=client, body=spec(word_count))
    assert response.status_code == 201
    job = response.parsed
    assert isinstance(job, JobView)
    assert response.headers["location"] == f"/v1/jobs/{job.id}"
    assert response.headers["etag"] == f'"{job.version}"'
    assert job.status is JobStatus.QUEUED and job.name == word_count["name"]
    assert job.error is None and job.progress.items_in == 0
    assert job.plan is not None and job.plan["stages"][0]["vertices"] == ["lines", "tokenize"]


def test_idempotency_key_replay_and_conflict(
    client: AuthenticatedClient, word_count: dict[str, Any]
) -> None:
    key = f"client-{uuid.uuid4()}"
    first = jobs_submit.sync_detailed(client=client, body=spec(word_count), idempotency_key=key)
    again = jobs_submit.sync_detailed(client=client, body=spec(word_count), idempotency_key=key)
    assert (first.status_code, again.status_code) == (201, 200)
    assert isinstance(first.parsed, JobView) and isinstance(again.parsed, JobView)
    assert again.parsed.id == first.parsed.id
    assert again.headers["location"] == first.headers["location"]

    other = jobs_submit.sync_detailed(
        client=client, body=spec(word_count, "another"), idempotency_key=key
    )
    assert other.status_code == 422
    assert isinstance(other.parsed, ProblemDetail)
    assert other.parsed.title == "Key reused" and key in other.parsed.detail
    assert other.headers["content-type"] == "application/problem+json"


def test_etag_then_if_none_match_is_304(
    client: AuthenticatedClient, word_count: dict[str, Any]
) -> None:
    job = submit(client, word_count)
    read = jobs_get.sync_detailed(job.id, client=client)
    assert read.status_code == 200 and isinstance(read.parsed, JobView)
    etag = read.headers["etag"]
    assert etag == f'"{read.parsed.version}"'

    unchanged = jobs_get.sync_detailed(job.id, client=client, if_none_match=etag)
    assert unchanged.status_code == 304 and unchanged.parsed is None and not unchanged.content
    assert unchanged.headers["etag"] == etag


def test_long_poll_returns_as_soon_as_another_thread_cancels(
    client: AuthenticatedClient, api_app: FastAPI, word_count: dict[str, Any]
) -> None:
    job = submit(client, word_count)
    etag = f'"{job.version}"'
    wait_s = 20.0
    answer: dict[str, Any] = {}

    def long_poll() -> None:
        began = time.monotonic()
        reply = jobs_get.sync_detailed(job.id, client=client, wait_s=wait_s, if_none_match=etag)
        answer.update(reply=reply, took=time.monotonic() - began)

    poller = threading.Thread(target=long_poll)
    poller.start()
    deadline = time.monotonic() + 10
    while job.id not in api_app.state.listener.waiters:  # the poll is parked on the listener
        assert time.monotonic() < deadline, "the long-poll never started waiting"
        time.sleep(0.01)
    cancelled = jobs_cancel.sync(job.id, client=client)
    assert isinstance(cancelled, JobView) and cancelled.status is JobStatus.CANCELLED
    poller.join(timeout=wait_s + 10)
    assert not poller.is_alive()

    reply = answer["reply"]
    assert reply.status_code == 200 and isinstance(reply.parsed, JobView)
    assert reply.parsed.status is JobStatus.CANCELLED and reply.headers["etag"] != etag
    # A bound, not a measurement: the poll ended long before wait_s ran out.
    assert answer["took"] < wait_s / 4, f"the long-poll took {answer['took']:.2f} s"


def test_list_filters_and_pages_without_duplicates_or_misses(
    client: AuthenticatedClient, word_count: dict[str, Any]
) -> None:
    name = f"client-pages-{uuid.uuid4().hex[:8]}"
    ids = [submit(client, word_count, name).id for _ in range(7)]
    for job_id in ids[:2]:
        assert isinstance(jobs_cancel.sync(job_id, client=client), JobView)

    def every_page(statuses: list[JobStatus] | None) -> list[list[uuid.UUID]]:
        pages: list[list[uuid.UUID]] = []
        cursor: str | None = None
        while True:
            page = jobs_list.sync(
                client=client,
                name=name,
                status=statuses,
                limit=2,
                **({"cursor": cursor} if cursor else {}),
            )
            assert isinstance(page, JobPage), page
            pages.append([job.id for job in page.items])
            assert all(job.name == name for job in page.items)
            if statuses:
                assert all(job.status in statuses for job in page.items)
            if not isinstance(page.next_cursor, str):
                return pages
            cursor = page.next_cursor

    pages = every_page(None)
    assert [len(page) for page in pages] == [2, 2, 2, 1]
    assert [job_id for page in pages for job_id in page] == list(reversed(ids))

    queued = [job_id for page in every_page([JobStatus.QUEUED]) for job_id in page]
    assert queued == list(reversed(ids[2:]))
    cancelled = every_page([JobStatus.CANCELLED])
    assert cancelled == [list(reversed(ids[:2]))]
    both = [j for page in every_page([JobStatus.QUEUED, JobStatus.CANCELLED]) for j in page]
    assert both == list(reversed(ids))

    garbage = jobs_list.sync_detailed(client=client, cursor="garbage")
    assert garbage.status_code == 422 and isinstance(garbage.parsed, ProblemDetail)


def test_transitions_and_409_on_illegal_moves(
    client: AuthenticatedClient, word_count: dict[str, Any]
) -> None:
    job_id = submit(client, word_count).id

    def act(action: Any, expected: JobStatus) -> JobView:
        view = action.sync(job_id, client=client)
        assert isinstance(view, JobView), view
        assert view.status is expected
        return view

    def refused(action: Any, status_now: str) -> None:
        response = action.sync_detailed(job_id, client=client)
        assert response.status_code == 409, response.content
        assert isinstance(response.parsed, ProblemDetail)
        assert response.parsed.title == "Illegal transition"
        assert status_now in response.parsed.detail

    act(jobs_suspend, JobStatus.SUSPENDED)
    refused(jobs_suspend, "SUSPENDED")
    act(jobs_resume, JobStatus.QUEUED)
    refused(jobs_resume, "QUEUED")
    refused(jobs_restart, "QUEUED")
    cancelled = act(jobs_cancel, JobStatus.CANCELLED)
    assert cancelled.finished_at is not None
    again = act(jobs_cancel, JobStatus.CANCELLED)  # a retried cancel: the job as it is
    assert again.version == cancelled.version
    for action in (jobs_suspend, jobs_resume, jobs_restart):
        refused(action, "CANCELLED")

    missing = jobs_cancel.sync_detailed(uuid.uuid4(), client=client)
    assert missing.status_code == 404 and isinstance(missing.parsed, ProblemDetail)


def test_results_page_of_a_job_without_results(
    client: AuthenticatedClient, word_count: dict[str, Any]
) -> None:
    page = jobs_results.sync(submit(client, word_count).id, client=client)
    assert isinstance(page, ResultPage)
    assert page.items == [] and page.next_cursor is None


@pytest.mark.parametrize(
    ("key", "key_type", "raw"),
    [
        ("hello", PartitionsGetKeyType.STRING, b"hello\0\0\0"),
        ("-5", PartitionsGetKeyType.INT, (-5).to_bytes(8, "little", signed=True)),
    ],
)
def test_partitions(
    client: AuthenticatedClient, key: str, key_type: PartitionsGetKeyType, raw: bytes
) -> None:
    view = partitions_get.sync(client=client, key=key, key_type=key_type, partition_count=13)
    assert isinstance(view, PartitionView)
    assert view.canonical_hex == raw.hex()
    assert view.partition_id == mmh3.hash(raw, 42) % 13 and view.partition_count == 13


def test_dags_validate_returns_the_plan_or_the_submission_422(
    client: AuthenticatedClient, word_count: dict[str, Any]
) -> None:
    report = dags_validate.sync(client=client, body=spec(word_count))
    assert isinstance(report, ValidationReport) and report.valid
    plan = report.plan.to_dict()
    assert [(e["source"], e["exchange"]) for e in plan["edges"]] == [
        ("lines", "fused"),
        ("tokenize", "shuffle"),
        ("accumulate", "shuffle"),
        ("combine", "fused"),
    ]
    assert any("Spark stage" in d.message for d in report.diagnostics)

    word_count["dag"]["edges"][1].pop("key")
    rejected = dags_validate.sync_detailed(client=client, body=spec(word_count))
    assert rejected.status_code == 422 and isinstance(rejected.parsed, ProblemDetail)
    errors = rejected.parsed.errors
    assert isinstance(errors, list)
    assert [e.to_dict()["pointer"] for e in errors] == ["/dag/edges/1/key"]


def test_health_without_a_token_and_401_with_a_wrong_one(api_url: str) -> None:
    with Client(base_url=api_url, raise_on_unexpected_status=True) as anonymous:
        assert health_live.sync(client=anonymous) is not None
        ready = health_ready.sync(client=anonymous)
        assert isinstance(ready, Health) and isinstance(ready.checks, HealthChecks)
        checks = {"postgresql": "ok", "redis": "ok", "snapshot_backups": "ok"}
        assert ready.checks.to_dict() == checks
    with AuthenticatedClient(base_url=api_url, token="wrong") as wrong:
        denied = jobs_list.sync_detailed(client=wrong)
        assert denied.status_code == 401 and isinstance(denied.parsed, ProblemDetail)
        assert denied.headers["www-authenticate"].startswith("Bearer")


def test_not_ready_is_a_typed_problem(database_url: str) -> None:
    app = create_app(database_url=database_url, redis_url="redis://127.0.0.1:1/0")
    with (
        live_server(app) as url,
        Client(base_url=url, raise_on_unexpected_status=True) as anonymous,
    ):
        response = health_ready.sync_detailed(client=anonymous)
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/problem+json"
    assert isinstance(response.parsed, ProblemDetail) and "redis" in response.parsed.detail
