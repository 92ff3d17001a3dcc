"""Attacks of one token holder on another's jobs, snapshots and keys, on a live API."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session

from jetspark.db.tables import Job, Snapshot
from jetspark.tenants.principals import PrincipalConfigError, PrincipalDirectory
from tests.security.tenant_stack import QUEUED_QUOTA, SSE_QUOTA, Stack, stack_fixture  # noqa: F401

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "word-count.json"


def body(name: str = "word-count") -> dict[str, Any]:
    spec: dict[str, Any] = copy.deepcopy(json.loads(EXAMPLE.read_text()))
    spec["name"] = name
    return spec


def submit(client: httpx.Client, name: str = "word-count", **headers: str) -> dict[str, Any]:
    response = client.post("/v1/jobs", json=body(name), headers=headers)
    assert response.status_code in (200, 201), response.text
    job: dict[str, Any] = response.json()
    return job


def test_another_principals_job_is_not_found_wherever_it_is_asked_for(stack: Stack) -> None:
    with stack.client("alice") as alice, stack.client("bob") as bob:
        job_id = submit(alice)["id"]
        for method, path in [
            ("GET", f"/v1/jobs/{job_id}"),
            ("GET", f"/v1/jobs/{job_id}?wait_s=1"),
            ("GET", f"/v1/jobs/{job_id}/results"),
            ("GET", f"/v1/jobs/{job_id}/dag"),
            ("GET", f"/v1/jobs/{job_id}/dag?format=svg"),
            ("GET", f"/v1/jobs/{job_id}/metrics"),
            ("GET", f"/v1/jobs/{job_id}/watermarks"),
            ("GET", f"/v1/jobs/{job_id}/snapshots"),
            ("GET", f"/v1/jobs/{job_id}/logs"),
            ("GET", f"/v1/jobs/{job_id}/sdk"),
            ("GET", f"/v1/jobs/{job_id}/events"),
            ("POST", f"/v1/jobs/{job_id}/cancel"),
            ("POST", f"/v1/jobs/{job_id}/suspend"),
            ("POST", f"/v1/jobs/{job_id}/resume"),
            ("POST", f"/v1/jobs/{job_id}/restart"),
        ]:
            response = bob.request(method, path)
            assert response.status_code == 404, (method, path, response.text)
            assert response.headers["content-type"] == "application/problem+json"
            assert response.json()["title"] == "Job not found"
        # Resuming the event stream with a cursor is no way round it.
        response = bob.get(f"/v1/jobs/{job_id}/events", headers={"Last-Event-ID": "0.0-0"})
        assert response.status_code == 404
        exported = bob.post(f"/v1/jobs/{job_id}/snapshots", json={"name": "mine"})
        assert exported.status_code == 404
        # Untouched: still QUEUED, and its owner sees it.
        assert alice.get(f"/v1/jobs/{job_id}").json()["status"] == "QUEUED"


def test_lists_and_the_event_feed_show_only_ones_own_jobs(stack: Stack) -> None:
    with stack.client("alice") as alice, stack.client("bob") as bob, stack.client("root") as root:
        with bob.stream("GET", "/v1/events") as feed:
            assert feed.status_code == 200
            alices = submit(alice, "alices")["id"]
            bobs = submit(bob, "bobs")["id"]
            seen: list[str] = []
            for line in feed.iter_lines():
                if line.startswith("data:"):
                    seen.append(json.loads(line[5:])["job_id"])
                    if bobs in seen:
                        break
        assert alices not in seen
        mine = {j["id"] for j in bob.get("/v1/jobs", params={"limit": 200}).json()["items"]}
        assert bobs in mine and alices not in mine
        everyone = {j["id"] for j in root.get("/v1/jobs", params={"limit": 200}).json()["items"]}
        assert {alices, bobs} <= everyone
        assert root.get(f"/v1/jobs/{alices}").status_code == 200


def test_an_admin_acts_on_any_job(stack: Stack) -> None:
    with stack.client("alice") as alice, stack.client("root") as root:
        job_id = submit(alice)["id"]
        assert root.post(f"/v1/jobs/{job_id}/cancel").json()["status"] == "CANCELLED"


def test_replaying_another_principals_idempotency_key_makes_a_job_of_ones_own(
    stack: Stack,
) -> None:
    key = f"key-{uuid.uuid4()}"
    with stack.client("alice") as alice, stack.client("bob") as bob:
        first = alice.post("/v1/jobs", json=body(), headers={"Idempotency-Key": key})
        assert first.status_code == 201
        replay = bob.post("/v1/jobs", json=body(), headers={"Idempotency-Key": key})
        assert replay.status_code == 201, replay.text
        assert replay.json()["id"] != first.json()["id"]
        # Each principal's own replay still returns its own job.
        again = bob.post("/v1/jobs", json=body(), headers={"Idempotency-Key": key})
        assert again.status_code == 200 and again.json()["id"] == replay.json()["id"]
        mine = alice.post("/v1/jobs", json=body(), headers={"Idempotency-Key": key})
        assert mine.status_code == 200 and mine.json()["id"] == first.json()["id"]


def _exported_snapshot(db_session: Session, owner: str, name: str) -> str:
    """A job of ``owner`` with a committed snapshot exported as ``name`` (rows as a worker
    and an export leave them)."""
    job = Job(name="stream", definition={"name": "stream"}, principal=owner, status="CANCELLED")
    db_session.add(job)
    db_session.flush()
    db_session.add(
        Snapshot(
            job_id=job.id,
            snapshot_id=1,
            epoch=1,
            name=name,
            principal=owner,
            source_offsets={"sources": {}},
            stats={"partition_count": 271, "vertices": {}},
            dag_fingerprint="x",
            committed_at=job.created_at or None,
        )
    )
    db_session.commit()
    return str(job.id)


def test_another_principals_snapshot_name_is_not_there_to_start_from(
    stack: Stack, db_session: Session
) -> None:
    name = f"snap-{uuid.uuid4().hex[:8]}"
    _exported_snapshot(db_session, stack.names["alice"], name)
    spec = body()
    spec["config"]["initial_snapshot"] = name
    with stack.client("bob") as bob:
        response = bob.post("/v1/jobs", json=spec)
    assert response.status_code == 409
    assert f"no exported snapshot is named {name!r}" in response.json()["detail"]


def test_snapshot_names_are_per_principal(stack: Stack, db_session: Session) -> None:
    name = f"snap-{uuid.uuid4().hex[:8]}"
    _exported_snapshot(db_session, stack.names["alice"], name)
    _exported_snapshot(db_session, stack.names["bob"], name)  # no clash with alice's


def test_the_queued_jobs_quota_answers_429_with_retry_after(stack: Stack) -> None:
    with stack.client("carol") as carol, stack.client("bob") as bob:
        made = [submit(carol)["id"] for _ in range(QUEUED_QUOTA)]
        refused = carol.post("/v1/jobs", json=body())
        assert refused.status_code == 429
        assert refused.headers["content-type"] == "application/problem+json"
        assert int(refused.headers["Retry-After"]) >= 1
        assert "JETSPARK_QUOTA_QUEUED_JOBS" in refused.json()["detail"]
        submit(bob)  # another principal is not held back
        carol.post(f"/v1/jobs/{made[0]}/cancel")
        submit(carol)  # a slot freed


def test_the_event_stream_quota_answers_429(stack: Stack) -> None:
    with stack.client("alice") as alice, stack.client("bob") as bob:
        job_id = submit(alice)["id"]
        streams = [alice.stream("GET", "/v1/events") for _ in range(SSE_QUOTA)]
        opened = [s.__enter__() for s in streams]
        try:
            assert all(r.status_code == 200 for r in opened)
            refused = alice.get(f"/v1/jobs/{job_id}/events")
            assert refused.status_code == 429 and "Retry-After" in refused.headers
            with bob.stream("GET", "/v1/events") as other:
                assert other.status_code == 200
        finally:
            for s in streams:
                s.__exit__(None, None, None)


def test_a_bare_token_is_a_principal_of_its_own(stack: Stack) -> None:
    with stack.client("bare") as bare, stack.client("alice") as alice:
        job_id = submit(bare)["id"]
        assert bare.get(f"/v1/jobs/{job_id}").status_code == 200
        assert alice.get(f"/v1/jobs/{job_id}").status_code == 404


@pytest.mark.parametrize(
    "principals, message",
    [
        (["no-colon"], "not name:token"),
        (["bad name:tok"], "must match"),
        (["a:same", "b:same"], "the same token"),
        (["a:"], "empty token"),
    ],
)
def test_a_bad_principals_setting_is_refused_at_start(principals: list[str], message: str) -> None:
    with pytest.raises(PrincipalConfigError, match=message):
        PrincipalDirectory.of_settings(tokens=[], principals=principals)
