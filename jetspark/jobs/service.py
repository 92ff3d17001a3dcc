"""Job operations as plain functions, session first: submit, get, list, request a transition."""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, or_, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from jetspark.dag.model import JobSpec
from jetspark.db.tables import Job, JobTransition, LifecycleRequest
from jetspark.jdbc.connections import JdbcConnections
from jetspark.jobs import orchestration
from jetspark.jobs.accept import AcceptRules, accept
from jetspark.jobs.lookup import get_job as get_job  # re-exported: callers use service.get_job
from jetspark.jobs.snapshots import check_initial_snapshot
from jetspark.jobs.status import JobStatus
from jetspark.kafka.clusters import KafkaClusters
from jetspark.settings import (
    DagLimits,
    JdbcSettings,
    KafkaSettings,
    RedisSettings,
    WebhookSettings,
)
from jetspark.tenants.principals import LOCAL, Principal
from jetspark.webhooks.targets import TargetPolicy


class IdempotencyConflict(Exception):
    """The same Idempotency-Key was used before with a different body."""

    def __init__(self, key: str) -> None:
        super().__init__(f"Idempotency-Key {key!r} was used before with a different request")


class InvalidCursor(ValueError):
    pass


@dataclass(frozen=True)
class Submitted:
    job: Job
    created: bool
    """False when an Idempotency-Key replay returned the job made earlier."""


class QuotaExceeded(Exception):
    """A principal has as much of something as its quota allows (429)."""

    def __init__(self, message: str, *, retry_after_s: int = 5) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


def _lock_principal(session: Session, principal: str) -> None:
    """Serialise one principal's submissions (until commit), so a quota check holds."""
    session.execute(
        text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"jetspark:{principal}"}
    )


def count_jobs(session: Session, principal: str, statuses: list[str]) -> int:
    return int(
        session.execute(
            select(func.count())
            .select_from(Job)
            .where(Job.principal == principal, Job.status.in_(statuses))
        ).scalar_one()
    )


def submit_job(
    session: Session,
    *,
    spec: JobSpec,
    limits: DagLimits,
    principal: Principal = LOCAL,
    idempotency_key: str | None = None,
    max_queued: int = 0,
    webhooks: WebhookSettings | None = None,
    targets: TargetPolicy | None = None,
    namespace: str | None = None,
    connections: JdbcConnections | None = None,
    clusters: KafkaClusters | None = None,
) -> Submitted:
    """Accept (``jetspark.jobs.accept``: every check, the plan built once) and store a job of
    ``principal`` as QUEUED with its first history row; commits. ``max_queued`` (0: none)
    bounds the principal's QUEUED jobs. The job's ``config.notify`` URLs are checked by
    ``targets`` (``NotifyRefused``) and kept with the server's default webhooks of
    ``webhooks``; Redis names are held to ``namespace`` (default: ``RedisSettings``), JDBC
    connections to ``connections`` (default: ``JdbcSettings``), Kafka topics to ``clusters``
    (default: ``KafkaSettings``)."""
    fingerprint = spec.fingerprint()
    if idempotency_key is not None:
        earlier = _by_idempotency_key(session, principal.name, idempotency_key, fingerprint)
        if earlier is not None:
            return Submitted(earlier, created=False)
    rules = AcceptRules(
        limits=limits,
        namespace=namespace if namespace is not None else RedisSettings().namespace,
        webhooks=webhooks or WebhookSettings(),
        targets=targets,
        principal=principal.name,
        connections=connections or JdbcConnections.parse(JdbcSettings().connections),
        clusters=clusters or KafkaClusters.parse(KafkaSettings().clusters),
        snapshots=lambda name, dag: check_initial_snapshot(session, principal.name, name, dag),
    )
    accepted = accept(spec, rules)
    if max_queued:
        _lock_principal(session, principal.name)
        if count_jobs(session, principal.name, [JobStatus.QUEUED.value]) >= max_queued:
            session.rollback()
            raise QuotaExceeded(
                f"principal {principal.name!r} has {max_queued} queued jobs, its quota "
                "(JETSPARK_QUOTA_QUEUED_JOBS); submit again when some have started"
            )
    job = Job(
        name=spec.name,
        principal=principal.name,
        definition=spec.as_json(),
        plan=accepted.plan.model_dump(mode="json"),
        status=JobStatus.QUEUED.value,
        # Stamped here, not by a later UPDATE: that one held the row while a worker that had
        # just read the announcement tried to claim it.
        announced_at=orchestration.now(),
        idempotency_key=idempotency_key,
        request_fingerprint=fingerprint,
        webhooks=accepted.webhooks or None,
    )
    session.add(job)
    try:
        orchestration.record_creation(session, job)
        session.commit()
    except IntegrityError:
        # Another request with the same key won the race: return its job.
        session.rollback()
        if idempotency_key is None:
            raise
        earlier = _by_idempotency_key(session, principal.name, idempotency_key, fingerprint)
        if earlier is None:
            raise
        return Submitted(earlier, created=False)
    return Submitted(job, created=True)


def _by_idempotency_key(session: Session, principal: str, key: str, fingerprint: str) -> Job | None:
    """The principal's own job under ``key``: keys are per principal, so replaying another
    principal's key makes a job of one's own and never returns theirs."""
    job = session.execute(
        select(Job).where(Job.principal == principal, Job.idempotency_key == key)
    ).scalar_one_or_none()
    if job is not None and job.request_fingerprint != fingerprint:
        raise IdempotencyConflict(key)
    return job


def keep_final_metrics(
    session: Session, job_id: uuid.UUID, attempt: int, metrics: dict[str, Any]
) -> bool:
    """Store an attempt's final metrics on a job a user cancelled (its worker did not end
    it, so they could not go with the status change); False if it is not that job now."""
    result = session.execute(
        update(Job)
        .where(
            Job.id == job_id,
            Job.attempt == attempt,
            Job.status == JobStatus.CANCELLED.value,
        )
        .values(metrics=metrics)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def encode_cursor(created_at: datetime, job_id: uuid.UUID) -> str:
    raw = json.dumps([created_at.isoformat(), str(job_id)]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        stamp, job_id = json.loads(raw)
        return datetime.fromisoformat(stamp), uuid.UUID(job_id)
    except (ValueError, TypeError) as error:
        raise InvalidCursor(f"cursor {cursor!r} is not one this server gave out") from error


def list_jobs(
    session: Session,
    *,
    principal: Principal,
    statuses: list[JobStatus] | None = None,
    name: str | None = None,
    limit: int = 50,
    cursor: str | None = None,
) -> tuple[list[Job], str | None]:
    """Newest first; returns the page and the cursor of the next page (None at the end)."""
    query = select(Job)
    if not principal.admin:
        query = query.where(Job.principal == principal.name)
    if statuses:
        query = query.where(Job.status.in_([s.value for s in statuses]))
    if name:
        query = query.where(Job.name == name)
    if cursor:
        stamp, last_id = decode_cursor(cursor)
        query = query.where(
            or_(Job.created_at < stamp, and_(Job.created_at == stamp, Job.id < last_id))
        )
    query = query.order_by(Job.created_at.desc(), Job.id.desc()).limit(limit + 1)
    jobs = list(session.execute(query).scalars())
    if len(jobs) > limit:
        last = jobs[limit - 1]
        return jobs[:limit], encode_cursor(last.created_at, last.id)
    return jobs, None


USER_ACTIONS: dict[str, JobStatus] = {
    "cancel": JobStatus.CANCELLED,
    "suspend": JobStatus.SUSPENDED,
    "resume": JobStatus.QUEUED,
    "restart": JobStatus.RESTARTING,
}


ALREADY_THERE = {"cancel"}
"""Actions that, asked of a job already in their target status, answer with the job (200):
a client retrying a cancel whose answer it lost must not see a 409."""


@dataclass(frozen=True)
class Acted:
    job: Job
    acted: bool
    """False for a replay (Idempotency-Key) or a job already where the action leads."""


def request_transition(
    session: Session,
    *,
    job_id: uuid.UUID,
    action: str,
    principal: Principal = LOCAL,
    idempotency_key: str | None = None,
) -> Job:
    """A user's cancel/suspend/resume/restart; commits. Restart goes on to QUEUED at once."""
    return act(
        session,
        job_id=job_id,
        action=action,
        principal=principal,
        idempotency_key=idempotency_key,
    ).job


def act(
    session: Session,
    *,
    job_id: uuid.UUID,
    action: str,
    principal: Principal = LOCAL,
    idempotency_key: str | None = None,
) -> Acted:
    """``request_transition``, saying whether it changed anything.

    With ``idempotency_key`` (the principal's own, like a submission's), the first request
    acts and records the key in the same transaction; a retry with the key answers with the
    job as it is now, acting no more. The key used before for another job or action is
    refused (``IdempotencyConflict``).
    """
    if idempotency_key is not None:
        earlier = _lifecycle_replay(session, principal, idempotency_key, job_id, action)
        if earlier is not None:
            return Acted(earlier, acted=False)
    target = USER_ACTIONS[action]
    current = get_job(session, job_id, principal)
    if action in ALREADY_THERE and current.status == target.value:
        return Acted(current, acted=False)
    stamp = orchestration.now()  # announced_at: the caller announces after the commit
    job = orchestration.transition(
        session,
        job_id,
        target,
        rule=action,  # each user action is the rule of its name
        cause=f"{action} requested",
        announced_at=stamp if target is JobStatus.QUEUED else None,
    )
    if target is JobStatus.RESTARTING:
        job = orchestration.transition(
            session,
            job_id,
            JobStatus.QUEUED,
            rule="requeue",
            cause="restarting",
            announced_at=stamp,
        )
    if idempotency_key is not None:
        session.add(
            LifecycleRequest(
                principal=principal.name, key=idempotency_key, job_id=job_id, action=action
            )
        )
    try:
        session.commit()
    except IntegrityError:
        # The same key won a race in another request: that one acted, this one must not.
        session.rollback()
        if idempotency_key is None:
            raise
        earlier = _lifecycle_replay(session, principal, idempotency_key, job_id, action)
        if earlier is None:
            raise
        return Acted(earlier, acted=False)
    return Acted(job, acted=True)


def _lifecycle_replay(
    session: Session, principal: Principal, key: str, job_id: uuid.UUID, action: str
) -> Job | None:
    seen = session.get(LifecycleRequest, (principal.name, key))
    if seen is None:
        return None
    if (seen.job_id, seen.action) != (job_id, action):
        raise IdempotencyConflict(key)
    return get_job(session, job_id, principal)


_RESULTS_AFTER = text(
    """
    SELECT p.first_seq + e.ord - 1 AS seq, e.item
    FROM job_result_pages AS p
    CROSS JOIN LATERAL jsonb_array_elements(p.items) WITH ORDINALITY AS e(item, ord)
    WHERE p.job_id = :job_id AND p.last_seq > :after AND p.first_seq + e.ord - 1 > :after
    ORDER BY p.last_seq, e.ord
    LIMIT :limit
    """
)
"""Records after seq ``after``: the pages holding them found by the (job_id, last_seq) index
in order and unfolded only as far as ``limit`` (not the ``job_results`` view, whose order by
a computed seq would unfold every page of the job first)."""


def list_results(
    session: Session, *, job_id: uuid.UUID, principal: Principal, limit: int, after: int | None
) -> tuple[list[dict[str, Any]], int | None]:
    """``sink.results`` records in order; the cursor is the last seq returned."""
    get_job(session, job_id, principal)
    params = {"job_id": job_id, "after": -1 if after is None else after, "limit": limit + 1}
    rows = list(session.execute(_RESULTS_AFTER, params))
    if len(rows) > limit:
        return [item for _, item in rows[:limit]], rows[limit - 1][0]
    return [item for _, item in rows], None


def list_transitions(
    session: Session,
    *,
    job_id: uuid.UUID | None,
    principal: Principal | None = None,
    after: int = 0,
    limit: int = 500,
) -> list[JobTransition]:
    """Status history after transition id ``after``, oldest first: one job's, or all jobs'
    (of ``principal``, when given and not an admin)."""
    query = select(JobTransition).where(JobTransition.id > after)
    if job_id is not None:
        query = query.where(JobTransition.job_id == job_id)
    if principal is not None and not principal.admin:
        query = query.join(Job, Job.id == JobTransition.job_id).where(
            Job.principal == principal.name
        )
    return list(session.execute(query.order_by(JobTransition.id).limit(limit)).scalars())


def last_transition_id(session: Session) -> int:
    """The newest transition's id (0 when there is none)."""
    newest = session.execute(select(func.max(JobTransition.id))).scalar_one_or_none()
    return int(newest or 0)
