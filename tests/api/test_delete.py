"""``DELETE /v1/jobs/{id}`` and ``DELETE /v1/jobs/{id}/snapshots/{name}`` on a live API: what
they delete in PostgreSQL and Redis, what they keep, and what they refuse."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis
from sqlalchemy import select
from sqlalchemy.orm import Session

from jetspark.db.tables import Snapshot
from jetspark.jobs.snapshots import committed_named
from jetspark.jobs.status import JobStatus
from jetspark.queue.keys import Keys
from jetspark.tenants.principals import bare_token_name
from tests.api.conftest import TOKEN
from tests.jobs.seeded import (
    GONE,
    PARTITIONS,
    named_snapshot_keys,
    redis_keys_of,
    rows_of,
    seed_job,
)
from worker.loop import Worker

OWNER = bare_token_name(TOKEN)


@pytest.fixture
def keys(redis_namespace: str) -> Keys:
    return Keys(redis_namespace)


@pytest.fixture
def client(redis_client: redis.Redis) -> Iterator[redis.Redis]:
    yield redis_client


def _problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    return body


def test_a_finished_job_is_deleted_with_every_row_and_key_but_its_named_snapshot(
    http: httpx.Client, db_session: Session, client: redis.Redis, keys: Keys
) -> None:
    name = f"keep-{uuid.uuid4().hex[:8]}"
    job = seed_job(db_session, client, keys, principal=OWNER, named=name)
    assert http.get(f"/v1/jobs/{job.id}").status_code == 200  # cached in the API now
    assert redis_keys_of(client, keys, job.id) > named_snapshot_keys(keys, job)
    assert rows_of(db_session, job.id)["snapshot_history"] == 3

    response = http.delete(f"/v1/jobs/{job.id}")
    assert response.status_code == 204 and response.content == b""

    for path in ("", "/results", "/logs", "/metrics", "/snapshots", "/events"):
        assert _problem(http.get(f"/v1/jobs/{job.id}{path}"), 404)["title"] == "Job not found"
    assert {k: v for k, v in rows_of(db_session, job.id).items() if k in GONE} == GONE
    # The named snapshot stays, state and all, and a new job may still start from it.
    assert rows_of(db_session, job.id)["named_snapshots"] == 1
    assert redis_keys_of(client, keys, job.id) == named_snapshot_keys(keys, job)
    assert committed_named(db_session, OWNER, name) is not None
    # Gone is gone: a second delete finds nothing.
    assert _problem(http.delete(f"/v1/jobs/{job.id}"), 404)["title"] == "Job not found"


def test_a_deleted_jobs_idempotency_key_makes_a_new_job(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    key = {"Idempotency-Key": f"del-{uuid.uuid4()}"}
    first = http.post("/v1/jobs", json=word_count, headers=key).json()
    cancelled = http.post(f"/v1/jobs/{first['id']}/cancel", headers=key)
    assert cancelled.json()["status"] == "CANCELLED"
    assert http.delete(f"/v1/jobs/{first['id']}").status_code == 204
    again = http.post("/v1/jobs", json=word_count, headers=key)
    assert again.status_code == 201 and again.json()["id"] != first["id"]
    # The lifecycle key went with the job too: used on the new job, it acts.
    assert http.post(f"/v1/jobs/{again.json()['id']}/cancel", headers=key).status_code == 200


@pytest.mark.parametrize("status", [JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.SUSPENDED])
def test_an_unfinished_job_is_not_deleted(
    http: httpx.Client, db_session: Session, client: redis.Redis, keys: Keys, status: JobStatus
) -> None:
    job = seed_job(db_session, client, keys, principal=OWNER, status=status)
    problem = _problem(http.delete(f"/v1/jobs/{job.id}"), 409)
    assert problem["title"] == "Job not finished"
    assert f"is {status.value}" in problem["detail"] and "cancel it first" in problem["detail"]
    assert http.get(f"/v1/jobs/{job.id}").json()["status"] == status.value
    assert rows_of(db_session, job.id)["unnamed_snapshots"] == 3
    assert len(redis_keys_of(client, keys, job.id)) > 3 * PARTITIONS
    # Cancelled, it is deleted (and no worker of the session's database takes it meanwhile).
    assert http.post(f"/v1/jobs/{job.id}/cancel").json()["status"] == "CANCELLED"
    assert http.delete(f"/v1/jobs/{job.id}").status_code == 204


def test_a_named_snapshot_is_deleted_with_its_state(
    http: httpx.Client, db_session: Session, client: redis.Redis, keys: Keys
) -> None:
    name = f"gone-{uuid.uuid4().hex[:8]}"
    job = seed_job(db_session, client, keys, principal=OWNER, named=name)
    listed = http.get(f"/v1/jobs/{job.id}/snapshots").json()["items"]
    assert [s["name"] for s in listed] == [name, None]

    assert http.delete(f"/v1/jobs/{job.id}/snapshots/{name}").status_code == 204
    assert [s["name"] for s in http.get(f"/v1/jobs/{job.id}/snapshots").json()["items"]] == [None]
    assert not named_snapshot_keys(keys, job) & redis_keys_of(client, keys, job.id)
    assert committed_named(db_session, OWNER, name) is None
    problem = _problem(http.delete(f"/v1/jobs/{job.id}/snapshots/{name}"), 404)
    assert problem["title"] == "Snapshot not found" and name in problem["detail"]


def test_a_named_snapshot_outlives_its_job_until_deleted(
    http: httpx.Client, db_session: Session, client: redis.Redis, keys: Keys
) -> None:
    name = f"out/lives-{uuid.uuid4().hex[:8]}"  # a "/" is part of a name
    job = seed_job(db_session, client, keys, principal=OWNER, named=name)
    assert http.delete(f"/v1/jobs/{job.id}").status_code == 204
    assert http.delete(f"/v1/jobs/{job.id}/snapshots/{name}").status_code == 204
    assert rows_of(db_session, job.id)["named_snapshots"] == 0
    assert redis_keys_of(client, keys, job.id) == set()


def test_a_snapshot_an_unfinished_job_starts_from_is_not_deleted(
    http: httpx.Client, db_session: Session, client: redis.Redis, keys: Keys
) -> None:
    name = f"used-{uuid.uuid4().hex[:8]}"
    job = seed_job(db_session, client, keys, principal=OWNER, named=name)
    user = seed_job(
        db_session, client, keys, principal=OWNER, status=JobStatus.QUEUED, initial_snapshot=name
    )
    problem = _problem(http.delete(f"/v1/jobs/{job.id}/snapshots/{name}"), 409)
    assert str(user.id) in problem["detail"] and "initial_snapshot" in problem["detail"]
    assert committed_named(db_session, OWNER, name) is not None
    assert http.post(f"/v1/jobs/{user.id}/cancel").status_code == 200
    assert http.delete(f"/v1/jobs/{job.id}/snapshots/{name}").status_code == 204


def test_a_running_jobs_named_snapshot_only_loses_its_name(
    http: httpx.Client, db_session: Session, client: redis.Redis, keys: Keys
) -> None:
    name = f"live-{uuid.uuid4().hex[:8]}"
    job = seed_job(db_session, client, keys, principal=OWNER, status=JobStatus.RUNNING, named=name)
    assert http.delete(f"/v1/jobs/{job.id}/snapshots/{name}").status_code == 204
    row = db_session.get(Snapshot, _snapshot_row(db_session, job.id, 2), populate_existing=True)
    assert row is not None and row.name is None and row.principal is None
    assert named_snapshot_keys(keys, job) <= redis_keys_of(client, keys, job.id)
    assert http.post(f"/v1/jobs/{job.id}/cancel").status_code == 200


def _snapshot_row(session: Session, job_id: uuid.UUID, snapshot_id: int) -> int:
    return int(
        session.execute(
            select(Snapshot.id).where(
                Snapshot.job_id == job_id, Snapshot.snapshot_id == snapshot_id
            )
        ).scalar_one()
    )


@pytest.mark.parametrize("name", ["%00", "x" * 257])
def test_a_bad_snapshot_name_is_a_422(http: httpx.Client, name: str) -> None:
    response = http.delete(f"/v1/jobs/{uuid.uuid4()}/snapshots/{name}")
    assert _problem(response, 422)["title"] == "Invalid request"


@pytest.mark.spark
@pytest.mark.slow
def test_a_run_jobs_keys_are_all_gone_after_delete(
    http: httpx.Client,
    worker: Worker,
    word_count: dict[str, Any],
    client: redis.Redis,
    keys: Keys,
    db_session: Session,
) -> None:
    job_id = http.post("/v1/jobs", json=word_count).json()["id"]
    deadline = time.monotonic() + 120
    response = http.get(f"/v1/jobs/{job_id}")
    while response.status_code == 304 or response.json()["status"] != "COMPLETED":
        assert time.monotonic() < deadline, response.text
        etag = response.headers["ETag"]
        response = http.get(
            f"/v1/jobs/{job_id}", params={"wait_s": 5}, headers={"If-None-Match": etag}
        )
    thread = worker.threads.get(uuid.UUID(job_id))
    if thread is not None:
        thread.result(timeout=60)  # the job's last lines and metrics are written
    assert http.get(f"/v1/jobs/{job_id}/results").json()["items"]
    assert http.get(f"/v1/jobs/{job_id}/logs").json()["lines"]
    assert redis_keys_of(client, keys, uuid.UUID(job_id))

    assert http.delete(f"/v1/jobs/{job_id}").status_code == 204
    assert redis_keys_of(client, keys, uuid.UUID(job_id)) == set()
    assert set(rows_of(db_session, uuid.UUID(job_id)).values()) == {0}
