"""Webhooks end to end: a live API, real PostgreSQL, a real receiver on loopback."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import WebhookDelivery
from jetspark.jobs import orchestration
from jetspark.jobs.status import JobStatus
from jetspark.webhooks.signing import verify
from tests.webhooks.conftest import LOOPBACK, SECRET, Serve, client, job_body
from tests.webhooks.receiver import receiver


def _run_to_completion(sessions: sessionmaker[Session], job_id: uuid.UUID) -> None:
    """What a worker does to a job's status: claim, start, finish (each its own commit)."""
    with sessions() as session:
        job = orchestration.claim(session, job_id, worker="w-test", lease=timedelta(seconds=30))
        assert job is not None
        token = job.fencing_token
        session.commit()
    for target in (JobStatus.RUNNING, JobStatus.COMPLETED):
        with sessions() as session:
            orchestration.transition(
                session, job_id, target, cause="test", worker="w-test", fencing_token=token
            )
            session.commit()


def _deliveries(sessions: sessionmaker[Session], job_id: uuid.UUID) -> list[WebhookDelivery]:
    with sessions() as session:
        query = select(WebhookDelivery).where(WebhookDelivery.job_id == job_id)
        return list(session.execute(query.order_by(WebhookDelivery.seq)).scalars())


def _settled(
    sessions: sessionmaker[Session], job_id: uuid.UUID, count: int, deadline_s: float = 30.0
) -> list[WebhookDelivery]:
    deadline = time.monotonic() + deadline_s
    while True:
        rows = _deliveries(sessions, job_id)
        if len(rows) == count and all(row.state != "pending" for row in rows):
            return rows
        assert time.monotonic() < deadline, [(r.state, r.attempts, r.last_error) for r in rows]
        time.sleep(0.05)  # polling the outbox with a deadline


def test_each_transition_arrives_once_per_delivery_id_after_two_500s(
    serve: Serve, sessions: sessionmaker[Session]
) -> None:
    with receiver(fail_first=2) as hook, serve(allowed_hosts=LOOPBACK) as api:
        with client(api) as alice:
            response = alice.post("/v1/jobs", json=job_body(hook.url))
            assert response.status_code == 201, response.text
            job_id = uuid.UUID(response.json()["id"])
            _run_to_completion(sessions, job_id)
            delivered = hook.wait_for(4)
            rows = _settled(sessions, job_id, 4)

            # Every delivery id: two 500s, then one 200, and never again.
            per_id = Counter(r.delivery for r in hook.received)
            assert set(per_id.values()) == {3}, per_id
            assert sorted(per_id) == sorted(str(row.id) for row in rows)
            assert len({r.delivery for r in delivered}) == 4
            assert [row.state for row in rows] == ["delivered"] * 4
            assert [row.attempts for row in rows] == [3] * 4

            bodies = [json.loads(r.body) for r in sorted(delivered, key=lambda r: r.delivery)]
            by_version = sorted(bodies, key=lambda b: b["job"]["version"])
            assert [(b["job"]["previous_status"], b["job"]["status"]) for b in by_version] == [
                (None, "QUEUED"),
                ("QUEUED", "STARTING"),
                ("STARTING", "RUNNING"),
                ("RUNNING", "COMPLETED"),
            ]
            for got in hook.received:
                document = json.loads(got.body)
                assert document["delivery_id"] == got.delivery
                assert document["job"]["id"] == str(job_id)
                assert "principal" not in document["job"]
                assert got.headers["X-Jetspark-Event"] == "job.status_changed"
                assert verify(
                    SECRET,
                    got.body,
                    signature_header=got.headers["X-Jetspark-Signature"],
                    timestamp_header=got.headers["X-Jetspark-Timestamp"],
                )
                assert not verify(
                    "another-secret",
                    got.body,
                    signature_header=got.headers["X-Jetspark-Signature"],
                    timestamp_header=got.headers["X-Jetspark-Timestamp"],
                )
                assert not verify(
                    SECRET,
                    got.body + b" ",
                    signature_header=got.headers["X-Jetspark-Signature"],
                    timestamp_header=got.headers["X-Jetspark-Timestamp"],
                )

            page = alice.get(f"/v1/jobs/{job_id}/deliveries").json()
            assert [item["status"] for item in page["items"]] == [
                "QUEUED",
                "STARTING",
                "RUNNING",
                "COMPLETED",
            ]
            assert {item["state"] for item in page["items"]} == {"delivered"}
            assert {item["last_status_code"] for item in page["items"]} == {200}
            assert page["next_cursor"] is None
            first = alice.get(f"/v1/jobs/{job_id}/deliveries", params={"limit": 1}).json()
            assert len(first["items"]) == 1 and first["next_cursor"] == first["items"][0]["seq"]
        with client(api, "bob") as bob:
            assert bob.get(f"/v1/jobs/{job_id}/deliveries").status_code == 404


def test_a_receiver_that_keeps_failing_is_given_up_and_recorded(
    serve: Serve, sessions: sessionmaker[Session]
) -> None:
    with (
        receiver(failing=True) as hook,
        serve(allowed_hosts=LOOPBACK, max_attempts=3) as api,
        client(api) as alice,
    ):
        job_id = alice.post("/v1/jobs", json=job_body(hook.url)).json()["id"]
        [row] = _settled(sessions, uuid.UUID(job_id), 1)
        assert row.state == "failed" and row.attempts == 3
        assert row.last_error is not None and "gave up after 3" in row.last_error
        assert len(hook.received) == 3
        assert len({r.delivery for r in hook.received}) == 1


def test_an_api_restart_mid_retry_still_delivers(
    serve: Serve, sessions: sessionmaker[Session]
) -> None:
    """The outbox is in PostgreSQL: a delivery failing when its API stops is delivered by
    the next API process, under the same delivery id."""
    with receiver(failing=True) as hook:
        with serve(allowed_hosts=LOOPBACK, backoff_initial_s=0.2, backoff_max_s=0.5) as api:
            with client(api) as alice:
                job_id = uuid.UUID(alice.post("/v1/jobs", json=job_body(hook.url)).json()["id"])
            deadline = time.monotonic() + 30
            while not [r for r in _deliveries(sessions, job_id) if r.attempts >= 2]:
                assert time.monotonic() < deadline, "no retry before the restart"
                time.sleep(0.05)  # polling the outbox with a deadline
        [row] = _deliveries(sessions, job_id)
        assert row.state == "pending"
        hook.failing = False
        failed_before = len(hook.received)
        with serve(allowed_hosts=LOOPBACK) as api:
            [delivered] = hook.wait_for(1)
            [row] = _settled(sessions, job_id, 1)
        assert row.state == "delivered"
        assert delivered.delivery == str(row.id)
        assert failed_before >= 2
        assert {r.delivery for r in hook.received} == {str(row.id)}


def test_a_target_refused_at_delivery_is_never_posted(
    serve: Serve, sessions: sessionmaker[Session]
) -> None:
    """Accepted where loopback was allowed, refused by an API whose rules refuse it: the
    check runs again at delivery, on the addresses the POST would connect to."""
    with receiver() as hook:
        by_name = hook.url.replace("127.0.0.1", "localhost")
        loopback = ["127.0.0.0/8", "::1/128"]
        with serve(allowed_hosts=loopback, deliver=False) as api, client(api) as alice:
            response = alice.post("/v1/jobs", json=job_body(hook.url, by_name))
            assert response.status_code == 201, response.text
            job_id = uuid.UUID(response.json()["id"])
        with serve() as api:  # default rules: no loopback
            rows = _settled(sessions, job_id, 2)
        assert [row.state for row in rows] == ["refused", "refused"]
        assert all("non-public address" in (row.last_error or "") for row in rows)
        assert [row.attempts for row in rows] == [1, 1]
        assert hook.received == []
