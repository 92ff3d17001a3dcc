"""The outbox commits with the status change or not at all; claimers never share a row."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.dag.model import JobSpec
from jetspark.db.tables import WebhookDelivery
from jetspark.jobs import orchestration, service
from jetspark.jobs.status import JobStatus
from jetspark.settings import DagLimits
from jetspark.webhooks import delivery_queue
from tests.webhooks.conftest import job_body, settings


def _count(sessions: sessionmaker[Session], job_id: uuid.UUID) -> int:
    with sessions() as session:
        query = select(func.count()).where(WebhookDelivery.job_id == job_id)
        return int(session.execute(query).scalar_one())


def _submit(sessions: sessionmaker[Session], *urls: str, **overrides: Any) -> uuid.UUID:
    hooks = settings(allowed_hosts=["127.0.0.1/32"], **overrides)
    with sessions() as session:
        spec = JobSpec.model_validate(job_body(*urls))
        return service.submit_job(session, spec=spec, limits=DagLimits(), webhooks=hooks).job.id


def test_deliveries_commit_with_the_change_or_not_at_all(sessions: sessionmaker[Session]) -> None:
    job_id = _submit(sessions, "http://127.0.0.1:9/a", default_urls=["http://127.0.0.1:9/all"])
    assert _count(sessions, job_id) == 2  # its own URL and the server's, for QUEUED
    with sessions() as session:
        orchestration.transition(session, job_id, JobStatus.CANCELLED, cause="test")
        session.rollback()
    assert _count(sessions, job_id) == 2
    with sessions() as session:
        orchestration.transition(session, job_id, JobStatus.CANCELLED, cause="test")
        session.commit()
    assert _count(sessions, job_id) == 4
    with sessions() as session:
        rows = delivery_queue.list_for_job(
            session, job_id, sources=["job", "server"], after=0, limit=10
        )
        assert [(r.source, delivery_queue.status_of(r.body)) for r in rows] == [
            ("job", "QUEUED"),
            ("server", "QUEUED"),
            ("job", "CANCELLED"),
            ("server", "CANCELLED"),
        ]
        assert json.loads(rows[2].body)["job"]["previous_status"] == "QUEUED"
        mine = delivery_queue.list_for_job(session, job_id, sources=["job"], after=0, limit=10)
        assert [r.url for r in mine] == ["http://127.0.0.1:9/a"] * 2


def test_a_job_without_webhooks_writes_no_deliveries(sessions: sessionmaker[Session]) -> None:
    job_id = _submit(sessions)
    with sessions() as session:
        orchestration.transition(session, job_id, JobStatus.CANCELLED, cause="test")
        session.commit()
    assert _count(sessions, job_id) == 0


def test_concurrent_claimers_take_disjoint_rows(sessions: sessionmaker[Session]) -> None:
    """Two open transactions claiming at once (SKIP LOCKED): no row goes to both."""
    job_id = _submit(sessions, *(f"http://127.0.0.1:9/{i}" for i in range(6)))
    assert _count(sessions, job_id) == 6
    lease = timedelta(minutes=5)
    first, second = sessions(), sessions()
    try:
        # The first claimer's UPDATE holds its rows until it commits: the second skips them.
        due = (
            select(WebhookDelivery.id)
            .where(WebhookDelivery.job_id == job_id, WebhookDelivery.state == "pending")
            .limit(4)
            .with_for_update(skip_locked=True)
        )
        held = set(first.execute(due).scalars())
        assert len(held) == 4
        claimed = delivery_queue.claim_due(second, limit=50, lease=lease)
        taken = {r.id for r in claimed if r.job_id == job_id}
        assert len(taken) == 2 and held.isdisjoint(taken)
        again = delivery_queue.claim_due(second, limit=50, lease=lease)
        assert [r for r in again if r.job_id == job_id] == []
    finally:
        first.rollback()
        first.close()
        second.close()
    with sessions() as session:
        claimed = delivery_queue.claim_due(session, limit=50, lease=lease)
        rest = {r.id for r in claimed if r.job_id == job_id}
    assert rest == held  # the leased ones are not due again until their lease ends
