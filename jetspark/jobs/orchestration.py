"""Every status change of a job goes through this module.

The allowed transitions are data (``RULES``); ``transition`` checks them, checks the fencing
token of a worker's write, records the change as a ``job_transitions`` row and sends a
PostgreSQL ``NOTIFY`` on ``CHANNEL`` inside the same transaction, so a listener learns of a
change exactly when it commits; a job with webhooks gets its outbox rows in that transaction
too (``jetspark.webhooks.delivery_queue``), so no change goes unannounced. ``claim`` and
``renew_lease`` are the lease half of the story.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from psycopg.errors import LockNotAvailable
from sqlalchemy import func, select, text, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from jetspark.db.tables import Job, JobTransition
from jetspark.jobs.status import HELD_BY_WORKER, TERMINAL_STATUSES, JobStatus
from jetspark.webhooks import delivery_queue

CHANNEL = "jetspark_job_changed"
"""PostgreSQL NOTIFY channel; the payload is ``<job id>:<version>:<status>``."""

S = JobStatus


@dataclass(frozen=True)
class Rule:
    """A named transition from any of ``sources`` to ``target``; every transition row records
    the name of the rule that allowed it (``job_transitions.rule``)."""

    name: str
    sources: frozenset[JobStatus]
    target: JobStatus


RULES: tuple[Rule, ...] = (
    Rule("submit", frozenset(), S.QUEUED),  # a new job's first row
    Rule("claim", frozenset({S.QUEUED}), S.STARTING),
    Rule("start", frozenset({S.STARTING}), S.RUNNING),
    Rule("complete-inputs", frozenset({S.RUNNING}), S.COMPLETING),
    Rule("finish", frozenset({S.RUNNING, S.COMPLETING}), S.COMPLETED),
    Rule("fail", frozenset({S.STARTING, S.RUNNING, S.COMPLETING, S.RESTARTING}), S.FAILED),
    Rule(
        "cancel",
        frozenset({S.QUEUED, S.STARTING, S.RUNNING, S.COMPLETING, S.SUSPENDED, S.RESTARTING}),
        S.CANCELLED,
    ),
    Rule("suspend", frozenset({S.QUEUED, S.STARTING, S.RUNNING}), S.SUSPENDED),
    Rule("resume", frozenset({S.SUSPENDED}), S.QUEUED),
    Rule("restart", frozenset({S.STARTING, S.RUNNING}), S.RESTARTING),
    # Back to the queue: the holder gives the job back (a handover, an outage, a restart) ...
    Rule("requeue", HELD_BY_WORKER, S.QUEUED),
    # ... its process died: the session lock it held is released (``jetspark.jobs.liveness``) ...
    Rule("holder-lost", HELD_BY_WORKER, S.QUEUED),
    # ... or it stopped renewing its lease (hung, partitioned): what a crash detector cannot see.
    Rule("lease-expired", HELD_BY_WORKER, S.QUEUED),
)

RULE_NAMED: dict[str, Rule] = {rule.name: rule for rule in RULES}

ALLOWED: dict[JobStatus, frozenset[JobStatus]] = {
    status: frozenset(rule.target for rule in RULES if status in rule.sources) for status in S
}


def rule_for(current: JobStatus, target: JobStatus, name: str | None = None) -> Rule | None:
    """The rule ``name`` if it moves ``current`` to ``target``; without a name, the first rule
    that does. None: no rule allows it."""
    candidates = [RULE_NAMED[name]] if name is not None else RULES
    return next((r for r in candidates if current in r.sources and r.target is target), None)


class OrchestrationError(Exception):
    """Base of the refusals this module raises."""


class JobNotFound(OrchestrationError):
    def __init__(self, job_id: uuid.UUID) -> None:
        super().__init__(f"job {job_id} does not exist")
        self.job_id = job_id


class IllegalTransition(OrchestrationError):
    def __init__(
        self, job_id: uuid.UUID, current: JobStatus, target: JobStatus, rule: str | None = None
    ) -> None:
        allowed = ", ".join(sorted(ALLOWED[current])) or "none (terminal)"
        by = f" by rule {rule!r}" if rule is not None else ""
        super().__init__(
            f"job {job_id} is {current.value}; it cannot become {target.value}{by} "
            f"(allowed from {current.value}: {allowed})"
        )
        self.job_id, self.current, self.target = job_id, current, target


class StaleFencingToken(OrchestrationError):
    """A worker wrote with a token older than the job's: another claim superseded it."""

    def __init__(self, job_id: uuid.UUID, token: int, current: int) -> None:
        super().__init__(f"job {job_id}: fencing token {token} is stale (current {current})")
        self.job_id, self.token, self.current = job_id, token, current


def now() -> datetime:
    return datetime.now(UTC)


def _notify(session: Session, job: Job) -> None:
    session.execute(
        text("SELECT pg_notify(:channel, :payload)"),
        {"channel": CHANNEL, "payload": f"{job.id}:{job.version}:{job.status}"},
    )


DELETED = "DELETED"
"""The status a deleted job's last NOTIFY names (its version one past its last)."""


def notify_deleted(session: Session, job: Job) -> None:
    """Tell listeners ``job`` is gone (in the deleting transaction): caches drop its view."""
    session.execute(
        text("SELECT pg_notify(:channel, :payload)"),
        {"channel": CHANNEL, "payload": f"{job.id}:{job.version + 1}:{DELETED}"},
    )


def _record(
    session: Session,
    job: Job,
    source: JobStatus | None,
    rule: Rule,
    cause: str,
    worker: str | None,
) -> None:
    session.add(
        JobTransition(
            job_id=job.id,
            from_status=source.value if source else None,
            to_status=job.status,
            rule=rule.name,
            cause=cause,
            worker=worker,
            attempt=job.attempt,
        )
    )
    if job.webhooks:
        delivery_queue.enqueue(session, job, source)
    _notify(session, job)


def record_creation(session: Session, job: Job) -> None:
    """Record the first row of a new job's history (call after ``session.add(job)``)."""
    session.flush()
    _record(session, job, None, RULE_NAMED["submit"], "submitted", None)


def load_for_update(session: Session, job_id: uuid.UUID) -> Job:
    job = session.execute(
        select(Job).where(Job.id == job_id).with_for_update()
    ).scalar_one_or_none()
    if job is None:
        raise JobNotFound(job_id)
    return job


def transition(
    session: Session,
    job_id: uuid.UUID,
    target: JobStatus,
    *,
    cause: str,
    worker: str | None = None,
    fencing_token: int | None = None,
    rule: str | None = None,
    **fields: Any,
) -> Job:
    """Move a job to ``target`` if a rule allows it (the rule named ``rule``, else the first
    that moves its status there); the caller commits.

    ``fencing_token`` is given by workers: their write is refused when a later claim (or a
    user's cancel) has moved the token on. ``fields`` are other columns to set with it.
    """
    job = load_for_update(session, job_id)
    if fencing_token is not None and fencing_token != job.fencing_token:
        raise StaleFencingToken(job_id, fencing_token, job.fencing_token)
    current = JobStatus(job.status)
    if rule_for(current, target, rule) is None:
        raise IllegalTransition(job_id, current, target, rule)
    if fencing_token is None and current in HELD_BY_WORKER:
        # A user (not the holder) moved a held job: the holder must stop. Dropping the lease
        # and bumping the token refuses its next renewal and every later write.
        job.fencing_token += 1
        job.lease_expires_at = None
    elif target not in HELD_BY_WORKER:
        job.lease_expires_at = None
    return _move(session, job, target, rule=rule, cause=cause, worker=worker, **fields)


def _move(
    session: Session,
    job: Job,
    target: JobStatus,
    *,
    cause: str,
    worker: str | None,
    rule: str | None = None,
    stamp: datetime | None = None,
    **fields: Any,
) -> Job:
    """Move the locked ``job`` to ``target`` as the rules allow (the rule named ``rule``, else
    the first that moves its status there), set ``fields`` and record the transition with
    the rule's name: every status change goes through here."""
    current = JobStatus(job.status)
    allowed = rule_for(current, target, rule)
    if allowed is None:
        raise IllegalTransition(job.id, current, target, rule)
    stamp = stamp or now()
    job.status = target.value
    job.version += 1
    job.updated_at = stamp
    if target is S.RUNNING and job.started_at is None:
        job.started_at = stamp
    if target in TERMINAL_STATUSES:
        job.finished_at = stamp
    for name, value in fields.items():
        setattr(job, name, value)
    _record(session, job, current, allowed, cause, worker)
    return job


class JobBusy(OrchestrationError):
    """Another transaction held the job's row past the claim's wait: try the entry again."""

    def __init__(self, job_id: uuid.UUID) -> None:
        super().__init__(f"job {job_id} is locked by another transaction")
        self.job_id = job_id


def _over_running_quota(session: Session, job: Job, max_running: int) -> bool:
    """Does the job's principal hold ``max_running`` jobs already (this one aside)?

    Claims of one principal are serialised by an advisory lock until the caller commits,
    so two workers cannot both take its last slot."""
    session.execute(
        text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"jetspark:{job.principal}"}
    )
    held = session.execute(
        select(func.count())
        .select_from(Job)
        .where(
            Job.principal == job.principal,
            Job.id != job.id,
            Job.status.in_([s.value for s in HELD_BY_WORKER]),
            Job.lease_expires_at > now(),
        )
    ).scalar_one()
    return int(held) >= max_running


def claim(
    session: Session,
    job_id: uuid.UUID,
    *,
    worker: str,
    lease: timedelta,
    wait: timedelta = timedelta(seconds=1),
    max_running: int = 0,
) -> Job | None:
    """Take a job for ``worker`` if it is queued, or held under a lease that has expired.

    Exactly one caller wins: the row is locked and re-checked. Returns the claimed job (its
    ``fencing_token`` is the one the worker must write with), or None. The caller commits.
    The claim waits up to ``wait`` for a row another transaction holds (the API queueing or
    a user acting on it) and then raises ``JobBusy``: skipping a locked row would drop the
    announcement of a job that a moment later is claimable.
    ``max_running`` (0: none) is the principal's quota of held jobs: past it the job is left
    QUEUED (an idle worker's poll or the reconciler finds it later) and the worker takes
    other jobs, so one principal's backlog never starves another's.
    """
    milliseconds = max(1, int(wait.total_seconds() * 1000))
    session.execute(text(f"SET LOCAL lock_timeout = '{milliseconds}ms'"))
    try:
        job = session.execute(
            select(Job).where(Job.id == job_id).with_for_update()
        ).scalar_one_or_none()
    except OperationalError as error:
        if isinstance(error.orig, LockNotAvailable):
            session.rollback()
            raise JobBusy(job_id) from error
        raise
    if job is None:
        return None
    return _take(session, job, worker=worker, lease=lease, max_running=max_running)


def claim_queued(
    session: Session,
    *,
    worker: str,
    lease: timedelta,
    older_than: timedelta,
    limit: int,
    max_running: int = 0,
    resumed_only: bool = False,
) -> list[Job]:
    """Claim up to ``limit`` jobs QUEUED for longer than ``older_than``, oldest first, straight
    from PostgreSQL: the jobs whose announcement was lost or dropped. The caller commits.
    With ``resumed_only``, only jobs that ran before (requeued because their worker was lost,
    stopped or let its lease run out, or resumed): a worker takes those before new ones,
    which the jobs stream would otherwise hand out first.

    Candidates are read unlocked and taken one by one (a row locked elsewhere is skipped): a
    principal past its quota holds nothing up for the others."""
    cutoff = func.now() - older_than  # the database's clock, as for updated_at
    queued = select(Job.id).where(Job.status == S.QUEUED.value, Job.updated_at <= cutoff)
    if resumed_only:
        queued = queued.where(Job.attempt > 0)
    candidates = session.execute(queued.order_by(Job.created_at).limit(limit + 50)).scalars()
    taken: list[Job] = []
    for job_id in list(candidates):
        if len(taken) >= limit:
            break
        job = session.execute(
            select(Job).where(Job.id == job_id).with_for_update(skip_locked=True)
        ).scalar_one_or_none()
        if job is not None and (
            claimed := _take(session, job, worker=worker, lease=lease, max_running=max_running)
        ):
            taken.append(claimed)
    return taken


def _take(
    session: Session, job: Job, *, worker: str, lease: timedelta, max_running: int = 0
) -> Job | None:
    """Claim the locked ``job`` if it is queued or its holder's lease expired."""
    current = JobStatus(job.status)
    stamp = now()
    expired = (
        current in HELD_BY_WORKER
        and job.lease_expires_at is not None
        and job.lease_expires_at <= stamp
    )
    if current is not S.QUEUED and not expired:
        return None
    if max_running and _over_running_quota(session, job, max_running):
        return None
    if expired:  # its holder stopped renewing: queued again, then claimed
        cause = f"lease of worker {job.worker} expired"
        _move(session, job, S.QUEUED, rule="lease-expired", cause=cause, worker=worker, stamp=stamp)
    job.worker = worker
    job.attempt += 1
    job.fencing_token += 1  # the new holder's writes only
    return _move(
        session,
        job,
        S.STARTING,
        rule="claim",
        cause=f"claimed by worker {worker}",
        worker=worker,
        stamp=stamp,
        lease_expires_at=stamp + lease,
        error_type=None,
        error_message=None,
        error_chain=None,
    )


def requeue_lost(
    session: Session, lost_worker: str, *, by: str, cause: str, last_seen: datetime | None
) -> list[uuid.UUID]:
    """Queue again every job ``lost_worker`` holds, by the "holder-lost" rule: its process
    died (``jetspark.jobs.liveness``). Its fencing token moves on, so should it only have been
    cut off, its next renewal and every later write are refused. Stamps ``announced_at`` and
    keeps, in ``timings``, when the holder was last seen and when its loss was noticed (the
    next attempt shows them). The caller commits, then announces the returned jobs."""
    stamp = now()
    jobs = (
        session.execute(
            select(Job)
            .where(Job.worker == lost_worker, Job.status.in_([s.value for s in HELD_BY_WORKER]))
            .order_by(Job.id)
            .with_for_update()
        )
        .scalars()
        .all()
    )
    for job in jobs:
        lost = {
            "worker": lost_worker,
            "attempt": job.attempt,
            "last_seen": last_seen.isoformat() if last_seen else None,
            "noticed": stamp.isoformat(),
        }
        job.fencing_token += 1
        _move(
            session,
            job,
            S.QUEUED,
            rule="holder-lost",
            cause=cause,
            worker=by,
            stamp=stamp,
            lease_expires_at=None,
            announced_at=stamp,
            timings={"holder_lost": lost},
        )
    return [job.id for job in jobs]


def renew_lease(
    session: Session, job_id: uuid.UUID, *, fencing_token: int, lease: timedelta
) -> bool:
    """Extend a held job's lease; False when the token is stale or the job no longer held."""
    held = [s.value for s in HELD_BY_WORKER]
    result = session.execute(
        update(Job)
        .where(Job.id == job_id, Job.fencing_token == fencing_token, Job.status.in_(held))
        .values(lease_expires_at=func.now() + lease)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def held_by(session: Session, job_id: uuid.UUID, *, fencing_token: int) -> Job:
    """The job, locked, if the worker with ``fencing_token`` still holds it; else refused
    (``StaleFencingToken`` or ``IllegalTransition``). Changes nothing: no version, no NOTIFY."""
    job = load_for_update(session, job_id)
    if fencing_token != job.fencing_token:
        raise StaleFencingToken(job_id, fencing_token, job.fencing_token)
    if JobStatus(job.status) not in HELD_BY_WORKER:
        raise IllegalTransition(job_id, JobStatus(job.status), JobStatus(job.status))
    return job


def record_progress(
    session: Session, job_id: uuid.UUID, *, fencing_token: int, **fields: Any
) -> Job:
    """A running job's holder records progress (counts, an epoch's commit); the caller commits.

    Refused like any worker write once the token moved on or the job is no longer held, so a
    worker that lost its job never commits an epoch of it. Watchers of the job are notified.
    """
    job = held_by(session, job_id, fencing_token=fencing_token)
    for name, value in fields.items():
        setattr(job, name, value)
    job.version += 1
    job.updated_at = now()
    _notify(session, job)
    return job
