"""The orchestration rules against a real PostgreSQL: every move, the audit trail, NOTIFY."""

from __future__ import annotations

import ast
import uuid
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session

from jetspark.db.tables import Job, JobTransition
from jetspark.jobs import orchestration
from jetspark.jobs.orchestration import (
    ALLOWED,
    CHANNEL,
    RULE_NAMED,
    IllegalTransition,
    JobBusy,
    JobNotFound,
    StaleFencingToken,
)
from jetspark.jobs.status import HELD_BY_WORKER, TERMINAL_STATUSES, JobStatus

LEASE = timedelta(seconds=30)


def new_job(session: Session, status: JobStatus = JobStatus.QUEUED) -> Job:
    job = Job(name="t", definition={"name": "t"}, status=status.value)
    session.add(job)
    orchestration.record_creation(session, job)
    session.commit()
    return job


def rules(session: Session, job_id: uuid.UUID) -> list[str | None]:
    """The names of the rules that moved the job, oldest first."""
    rows = session.execute(
        select(JobTransition.rule).where(JobTransition.job_id == job_id).order_by(JobTransition.id)
    )
    return list(rows.scalars())


def history(session: Session, job_id: uuid.UUID) -> list[tuple[str | None, str]]:
    rows = session.execute(
        select(JobTransition.from_status, JobTransition.to_status)
        .where(JobTransition.job_id == job_id)
        .order_by(JobTransition.id)
    )
    return [(a, b) for a, b in rows]


@pytest.mark.parametrize("source", list(JobStatus))
def test_every_move_is_allowed_or_refused_by_the_rules(
    db_session: Session, source: JobStatus
) -> None:
    for target in JobStatus:
        job = new_job(db_session, source)
        if target in ALLOWED[source]:
            moved = orchestration.transition(db_session, job.id, target, cause="test")
            db_session.commit()
            assert moved.status == target.value
            assert history(db_session, job.id)[-1] == (source.value, target.value)
            rule = rules(db_session, job.id)[-1]
            assert rule is not None and RULE_NAMED[rule].target is target
            assert source in RULE_NAMED[rule].sources
        else:
            with pytest.raises(IllegalTransition, match=source.value):
                orchestration.transition(db_session, job.id, target, cause="test")
            db_session.rollback()


def test_terminal_statuses_allow_nothing() -> None:
    for status in TERMINAL_STATUSES:
        assert ALLOWED[status] == frozenset()


def test_claim_then_run_then_finish_is_recorded_in_order(db_session: Session) -> None:
    job = new_job(db_session)
    claimed = orchestration.claim(db_session, job.id, worker="w1", lease=LEASE)
    db_session.commit()
    assert claimed is not None and claimed.attempt == 1 and claimed.fencing_token == 1
    token = claimed.fencing_token
    for target in (JobStatus.RUNNING, JobStatus.COMPLETED):
        orchestration.transition(db_session, job.id, target, cause="t", fencing_token=token)
        db_session.commit()
    assert history(db_session, job.id) == [
        (None, "QUEUED"),
        ("QUEUED", "STARTING"),
        ("STARTING", "RUNNING"),
        ("RUNNING", "COMPLETED"),
    ]
    finished = db_session.get(Job, job.id)
    assert finished is not None and finished.started_at and finished.finished_at
    assert finished.version == 4


def test_a_users_cancel_fences_the_holder(db_session: Session) -> None:
    job = new_job(db_session)
    claimed = orchestration.claim(db_session, job.id, worker="w1", lease=LEASE)
    db_session.commit()
    assert claimed is not None
    token = claimed.fencing_token
    orchestration.transition(db_session, job.id, JobStatus.CANCELLED, cause="user")
    db_session.commit()
    assert not orchestration.renew_lease(db_session, job.id, fencing_token=token, lease=LEASE)
    with pytest.raises(StaleFencingToken):
        orchestration.transition(
            db_session, job.id, JobStatus.FAILED, cause="late", fencing_token=token
        )
    db_session.rollback()


def test_claim_refuses_a_live_lease_and_takes_an_expired_one(db_session: Session) -> None:
    job = new_job(db_session)
    assert orchestration.claim(db_session, job.id, worker="w1", lease=LEASE) is not None
    db_session.commit()
    assert orchestration.claim(db_session, job.id, worker="w2", lease=LEASE) is None
    db_session.rollback()
    held = db_session.get(Job, job.id)
    assert held is not None and JobStatus(held.status) in HELD_BY_WORKER
    held.lease_expires_at = orchestration.now() - timedelta(seconds=1)
    db_session.commit()
    taken = orchestration.claim(db_session, job.id, worker="w2", lease=LEASE)
    db_session.commit()
    assert taken is not None and taken.worker == "w2" and taken.attempt == 2
    assert history(db_session, job.id)[-2:] == [("STARTING", "QUEUED"), ("QUEUED", "STARTING")]
    assert rules(db_session, job.id) == ["submit", "claim", "lease-expired", "claim"]


def test_each_row_names_its_rule_and_a_named_rule_must_fit_the_move(db_session: Session) -> None:
    job = new_job(db_session)
    claimed = orchestration.claim(db_session, job.id, worker="w1", lease=LEASE)
    db_session.commit()
    assert claimed is not None
    with pytest.raises(IllegalTransition, match="by rule 'resume'"):
        orchestration.transition(
            db_session, job.id, JobStatus.QUEUED, cause="t", rule="resume", fencing_token=1
        )
    db_session.rollback()
    orchestration.transition(
        db_session, job.id, JobStatus.QUEUED, cause="handed over", fencing_token=1
    )
    db_session.commit()
    assert rules(db_session, job.id) == ["submit", "claim", "requeue"]


def test_the_jobs_of_a_lost_worker_are_requeued_and_it_is_fenced(db_session: Session) -> None:
    lost, other = new_job(db_session), new_job(db_session)
    for held, worker in ((lost, "dead"), (other, "alive")):
        assert orchestration.claim(db_session, held.id, worker=worker, lease=LEASE) is not None
        db_session.commit()
    seen = orchestration.now() - timedelta(seconds=1)
    requeued = orchestration.requeue_lost(
        db_session, "dead", by="judge", cause="worker dead lost", last_seen=seen
    )
    db_session.commit()
    assert requeued == [lost.id]
    db_session.expire_all()
    job = db_session.get(Job, lost.id)
    assert job is not None and job.status == "QUEUED" and job.lease_expires_at is None
    assert job.fencing_token == 2 and job.announced_at is not None
    assert job.timings == {
        "holder_lost": {
            "worker": "dead",
            "attempt": 1,
            "last_seen": seen.isoformat(),
            "noticed": job.announced_at.isoformat(),
        }
    }
    assert rules(db_session, lost.id) == ["submit", "claim", "holder-lost"]
    assert not orchestration.renew_lease(db_session, lost.id, fencing_token=1, lease=LEASE)
    untouched = db_session.get(Job, other.id)
    assert untouched is not None and untouched.status == "STARTING"
    # A second judge finds nothing left to requeue.
    assert orchestration.requeue_lost(db_session, "dead", by="j2", cause="c", last_seen=None) == []


def test_unknown_job_is_reported(db_session: Session) -> None:
    with pytest.raises(JobNotFound):
        orchestration.transition(db_session, uuid.uuid4(), JobStatus.CANCELLED, cause="t")


def test_a_transition_notifies_listeners_when_it_commits(
    db_session: Session, db_engine: Engine
) -> None:
    job = new_job(db_session)
    dsn = db_engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as listener:
        listener.execute(f"LISTEN {CHANNEL}")
        orchestration.transition(db_session, job.id, JobStatus.CANCELLED, cause="user")
        assert list(listener.notifies(timeout=0.2, stop_after=1)) == []  # not before commit
        db_session.commit()
        (note,) = listener.notifies(timeout=5, stop_after=1)
    assert note.payload == f"{job.id}:{job.version}:CANCELLED"


def test_a_claim_waits_for_a_locked_row_then_says_busy(db_engine: Engine) -> None:
    with Session(db_engine) as holder, Session(db_engine) as claimer:
        job = new_job(holder)
        orchestration.load_for_update(holder, job.id)  # the API or a user writing the row
        with pytest.raises(JobBusy):
            orchestration.claim(
                claimer, job.id, worker="w", lease=LEASE, wait=timedelta(milliseconds=50)
            )
        holder.commit()
        assert orchestration.claim(claimer, job.id, worker="w", lease=LEASE) is not None
        claimer.commit()


def test_claim_queued_takes_only_jobs_queued_long_enough(db_session: Session) -> None:
    job = new_job(db_session)
    db_session.execute(
        update(Job).where(Job.id == job.id).values(updated_at=func.now() - timedelta(hours=1))
    )
    db_session.commit()
    fresh = new_job(db_session)
    taken = orchestration.claim_queued(
        db_session, worker="w", lease=LEASE, older_than=timedelta(minutes=30), limit=100
    )
    db_session.commit()
    assert job.id in {t.id for t in taken} and fresh.id not in {t.id for t in taken}
    assert db_session.get(Job, fresh.id).status == "QUEUED"  # type: ignore[union-attr]


def test_a_principal_past_its_running_quota_waits_while_others_are_claimed(
    db_session: Session,
) -> None:
    greedy, other = f"greedy-{uuid.uuid4().hex[:6]}", f"other-{uuid.uuid4().hex[:6]}"
    jobs = []
    for owner in (greedy, greedy, greedy, other):
        job = Job(name="t", definition={"name": "t"}, principal=owner)
        db_session.add(job)
        orchestration.record_creation(db_session, job)
        db_session.commit()
        jobs.append(job.id)
    claimed = []
    for job_id in jobs:
        taken = orchestration.claim(db_session, job_id, worker="w", lease=LEASE, max_running=2)
        db_session.commit()
        claimed.append(taken is not None)
    assert claimed == [True, True, False, True]
    db_session.expire_all()
    assert db_session.get(Job, jobs[2]).status == JobStatus.QUEUED.value  # type: ignore[union-attr]
    # Once one of greedy's jobs ends, the waiting one is claimed.
    orchestration.transition(db_session, jobs[0], JobStatus.CANCELLED, cause="test")
    db_session.commit()
    assert orchestration.claim(db_session, jobs[2], worker="w", lease=LEASE, max_running=2)
    db_session.commit()


def test_claim_queued_resumed_only_takes_jobs_that_ran_before(db_session: Session) -> None:
    fresh, resumed = new_job(db_session), new_job(db_session)
    lost = f"lost-{uuid.uuid4().hex[:6]}"
    assert orchestration.claim(db_session, resumed.id, worker=lost, lease=LEASE)
    db_session.commit()
    orchestration.requeue_lost(db_session, lost, by="judge", cause="lost", last_seen=None)
    db_session.commit()
    taken = orchestration.claim_queued(
        db_session, worker="w", lease=LEASE, older_than=timedelta(0), limit=10**4, resumed_only=True
    )
    db_session.commit()
    assert resumed.id in {job.id for job in taken} and fresh.id not in {job.id for job in taken}
    assert all(job.attempt > 1 for job in taken)  # each ran before this claim
    assert db_session.get(Job, fresh.id).status == "QUEUED"  # type: ignore[union-attr]


def test_every_transition_in_the_product_names_its_rule() -> None:
    """No status change of the product is left to ``rule_for``'s first match: each call of
    ``transition`` or ``_move`` in ``jetspark``, ``api`` and ``worker`` names its rule, so the
    row it records says why the job moved (several rules share a move: HELD -> QUEUED)."""
    root = Path(__file__).resolve().parents[2]
    unnamed = []
    for package in ("jetspark", "api", "worker", "launcher"):
        for path in (root / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if not isinstance(node, ast.Call):
                    continue
                called = node.func
                name = called.attr if isinstance(called, ast.Attribute) else None
                name = called.id if isinstance(called, ast.Name) else name
                if name not in {"transition", "_move"} or path.name == "jdbc_io.py":  # moves rows
                    continue
                if not any(keyword.arg == "rule" for keyword in node.keywords):
                    unnamed.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not unnamed, f"transitions without their rule's name: {unnamed}"
