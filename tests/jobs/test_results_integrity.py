"""``job_result_pages`` keeps to its jobs (migration 0010's statement-level triggers): pages of
a job that does not exist are refused, and deleting a job deletes its pages; the
``job_results`` view and the API read the pages back a record at a time."""

from __future__ import annotations

import threading
import uuid

import pytest
from sqlalchemy import Engine, delete, func, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import Job, JobResult
from jetspark.jobs import orchestration, service
from jetspark.jobs.status import JobStatus
from jetspark.tenants.principals import Principal
from tests.polling import poll
from worker.results import PAGE_RECORDS, ResultsWriter

_PAGE = text(
    "INSERT INTO job_result_pages (job_id, first_seq, last_seq, vertex, items) "
    "SELECT :job_id, 0, :last, 'out', jsonb_agg(jsonb_build_object('n', n) ORDER BY n) "
    "FROM generate_series(0, :last) AS n"
)


def _job(session: Session) -> uuid.UUID:
    job = Job(
        name="kept",
        principal="alice",
        definition={"name": "kept"},
        plan={},
        status=JobStatus.COMPLETED.value,
        attempt=1,
    )
    session.add(job)
    orchestration.record_creation(session, job)
    session.commit()
    return job.id


def _records(session: Session, job_id: uuid.UUID) -> int:
    query = select(func.count()).select_from(JobResult).where(JobResult.job_id == job_id)
    return int(session.execute(query).scalar_one())


def test_pages_of_a_job_that_does_not_exist_are_refused(db_session: Session) -> None:
    real = _job(db_session)
    # One statement naming a real job and a made-up one: all of it is refused.
    mixed = text(
        "INSERT INTO job_result_pages VALUES "
        "(:real, 0, 0, 'out', '[{}]'), (:made_up, 0, 0, 'out', '[{}]')"
    )
    with pytest.raises(IntegrityError, match="names a job that does not exist"):
        db_session.execute(mixed, {"real": real, "made_up": uuid.uuid4()})
    db_session.rollback()
    assert _records(db_session, real) == 0
    # Nor can a page be moved onto a job that does not exist.
    db_session.execute(_PAGE, {"job_id": real, "last": 2})
    db_session.commit()
    with pytest.raises(IntegrityError, match="names a job that does not exist"):
        db_session.execute(
            text("UPDATE job_result_pages SET job_id = :to WHERE job_id = :job_id"),
            {"to": uuid.uuid4(), "job_id": real},
        )
    db_session.rollback()
    assert _records(db_session, real) == 3


def test_deleting_jobs_deletes_their_records_only(db_session: Session) -> None:
    gone, kept = _job(db_session), _job(db_session)
    for job_id in (gone, kept):
        db_session.execute(_PAGE, {"job_id": job_id, "last": 999})
    db_session.commit()
    db_session.execute(delete(Job).where(Job.id == gone))
    db_session.commit()
    assert (_records(db_session, gone), _records(db_session, kept)) == (0, 1000)


def test_a_job_deleted_while_its_records_are_written_waits_then_takes_them(
    db_engine: Engine,
) -> None:
    """The write locks its job as the foreign key did: a concurrent delete waits for the
    write's commit, then deletes the records with the job, leaving none behind."""
    sessions = sessionmaker(db_engine)
    with sessions() as setup:
        job_id = _job(setup)
    deleted = threading.Event()
    with sessions() as writer:
        writer.execute(_PAGE, {"job_id": job_id, "last": 99})

        def delete_job() -> None:
            with sessions() as deleter:
                deleter.execute(text("SET lock_timeout = '20s'"))
                deleter.execute(delete(Job).where(Job.id == job_id))
                deleter.commit()
            deleted.set()

        thread = threading.Thread(target=delete_job)
        thread.start()

        def delete_waits() -> bool:
            assert not deleted.is_set(), "the delete did not wait for the write's transaction"
            return _waiting_on_a_lock(db_engine, "DELETE FROM jobs")

        poll(delete_waits, what="the delete waiting on the write's lock", deadline_s=20)
        writer.commit()
        thread.join(timeout=30)
    assert deleted.is_set()
    with sessions() as check:
        assert _records(check, job_id) == 0


def test_records_read_back_in_order_across_pages_vertices_and_writes(
    db_session: Session,
) -> None:
    """Pages of several vertices and writes, read a record at a time by the view and a page
    at a time by the API, from every cursor: each record once, in the order kept."""
    job_id = _job(db_session)
    writer = ResultsWriter(job_id)
    first = PAGE_RECORDS + 7
    writer.write(db_session, {"a": [{"a": i} for i in range(first)], "b": [{"b": 0}]})
    writer.write(db_session, {"a": [{"a": first + i} for i in range(3)]})
    db_session.commit()
    expected = [{"a": i} for i in range(first)] + [{"b": 0}] + [{"a": first + i} for i in range(3)]
    rows = db_session.execute(
        select(JobResult.seq, JobResult.item)
        .where(JobResult.job_id == job_id)
        .order_by(JobResult.seq)
    )
    assert [(seq, item) for seq, item in rows] == list(enumerate(expected))
    alice = Principal(name="alice")
    for limit in (1, 7, 1000, 5000):
        read, cursor = [], None
        while True:
            items, last = service.list_results(
                db_session, job_id=job_id, principal=alice, limit=limit, after=cursor
            )
            read += items
            if last is None:
                break
            cursor = last
        assert read == expected, limit
    items, _ = service.list_results(
        db_session, job_id=job_id, principal=alice, limit=3, after=PAGE_RECORDS - 2
    )
    assert items == [{"a": PAGE_RECORDS - 1}, {"a": PAGE_RECORDS}, {"a": PAGE_RECORDS + 1}]


def _waiting_on_a_lock(engine: Engine, statement: str) -> bool:
    """Whether a backend runs ``statement`` and waits on a lock (asked afresh: within one
    transaction PostgreSQL answers from a snapshot of its activity)."""
    waiting = text(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
        "AND datname = current_database() AND query LIKE :statement"
    )
    with engine.connect() as conn:
        return bool(conn.execute(waiting, {"statement": statement + "%"}).scalar_one())
