"""Retention on a real PostgreSQL and Redis with a frozen clock: exactly the due jobs go, with
every row and key of theirs; named snapshots stay; sweepers never collide."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import redis
from pyspark.sql import SparkSession
from sqlalchemy import Engine, delete, func, select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import Job, Snapshot
from jetspark.jobs.retention import SWEEP_LOCK, Policy, due, sweep
from jetspark.jobs.snapshots import committed_named
from jetspark.jobs.status import JobStatus
from jetspark.queue.keys import Keys
from jetspark.settings import RetentionSettings, WorkerSettings
from tests.databases import fresh_engine
from tests.jobs.seeded import GONE, named_snapshot_keys, redis_keys_of, rows_of, seed_job
from worker.engine import run_job
from worker.loop import Worker

NOW = datetime(2030, 1, 1, tzinfo=UTC)
"""The frozen clock: every sweep runs at this instant."""
S = timedelta(seconds=1)
TTL = RetentionSettings(completed_s=3600, failed_s=4 * 3600, cancelled_s=1800, max_jobs=0)


@pytest.fixture(scope="module")
def engine(server_database_url: str) -> Iterator[Engine]:
    """A database of retention's own: a sweep acts on every finished job there is."""
    with fresh_engine(server_database_url, "jetspark_retention", pool_size=4) as made:
        yield made


@pytest.fixture
def sessions(engine: Engine) -> Iterator[sessionmaker[Session]]:
    made = sessionmaker(engine, expire_on_commit=False)
    yield made
    with made() as session:  # each test starts from no jobs
        session.execute(delete(Snapshot))
        session.execute(delete(Job))
        session.commit()


@pytest.fixture
def session(sessions: sessionmaker[Session]) -> Iterator[Session]:
    with sessions() as made:
        yield made


@pytest.fixture
def keys(redis_namespace: str) -> Keys:
    return Keys(f"{redis_namespace}-ret-{uuid.uuid4().hex[:6]}")


def _seed(
    session: Session,
    client: redis.Redis,
    keys: Keys,
    status: JobStatus,
    ago: timedelta,
    principal: str = "alice",
    named: str | None = None,
) -> uuid.UUID:
    return seed_job(
        session, client, keys, principal=principal, status=status, finished_at=NOW - ago,
        named=named,
    ).id  # fmt: skip


def _exists(session: Session, job_id: uuid.UUID) -> bool:
    return rows_of(session, job_id)["jobs"] == 1


def test_each_status_is_kept_its_time_and_deleted_just_after(
    session: Session, redis_client: redis.Redis, keys: Keys
) -> None:
    done, failed, cancelled = JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED
    kept = {
        "completed just under its hour": _seed(session, redis_client, keys, done, 3600 * S - S),
        "failed past the completed hour": _seed(session, redis_client, keys, failed, 3601 * S),
        "failed just under its 4 hours": _seed(session, redis_client, keys, failed, 14399 * S),
        "cancelled just under its half hour": _seed(
            session, redis_client, keys, cancelled, 1799 * S
        ),
        "running for a day": _seed(session, redis_client, keys, JobStatus.RUNNING, 86400 * S),
        "suspended for a day": _seed(session, redis_client, keys, JobStatus.SUSPENDED, 86400 * S),
    }
    deleted = {
        "completed just over its hour": _seed(session, redis_client, keys, done, 3601 * S),
        "failed just over its 4 hours": _seed(session, redis_client, keys, failed, 14401 * S),
        "cancelled just over its half hour": _seed(
            session, redis_client, keys, cancelled, 1801 * S
        ),
    }
    assert sweep(session, redis_client, keys, Policy.of(TTL), NOW) == len(deleted)
    for what, job_id in deleted.items():
        assert {k: v for k, v in rows_of(session, job_id).items() if k in GONE} == GONE, what
        assert redis_keys_of(redis_client, keys, job_id) == set(), what
    for what, job_id in kept.items():
        assert _exists(session, job_id), what
        assert redis_keys_of(redis_client, keys, job_id), what
    assert sweep(session, redis_client, keys, Policy.of(TTL), NOW) == 0  # nothing more due


def test_beyond_the_count_the_earliest_finished_go_per_principal(
    session: Session, redis_client: redis.Redis, keys: Keys
) -> None:
    policy = Policy.of(RetentionSettings(max_jobs=3))  # TTLs of days: only the count acts
    alices = [
        _seed(session, redis_client, keys, JobStatus.COMPLETED, minutes * 60 * S)
        for minutes in (50, 10, 40, 20, 30)
    ]
    # Bob's are older than all of Alice's: another principal's count does not reach them.
    bobs = [
        _seed(session, redis_client, keys, JobStatus.FAILED, hours * 3600 * S, principal="bob")
        for hours in (5, 6)
    ]
    unfinished = _seed(session, redis_client, keys, JobStatus.QUEUED, 99 * 3600 * S)
    assert due(session, policy, NOW, 10) == [alices[0], alices[2]]  # 50 and 40 minutes ago
    assert sweep(session, redis_client, keys, policy, NOW) == 2
    assert [_exists(session, j) for j in alices] == [False, True, False, True, True]
    assert all(_exists(session, j) for j in [*bobs, unfinished])


def test_named_snapshots_survive_their_jobs_deletion(
    session: Session, redis_client: redis.Redis, keys: Keys
) -> None:
    name = f"kept-{uuid.uuid4().hex[:6]}"
    job = seed_job(
        session, redis_client, keys, principal="alice", finished_at=NOW - 2 * 3600 * S, named=name
    )
    assert sweep(session, redis_client, keys, Policy.of(TTL), NOW) == 1
    assert {k: v for k, v in rows_of(session, job.id).items() if k in GONE} == GONE
    assert rows_of(session, job.id)["named_snapshots"] == 1
    assert committed_named(session, "alice", name) is not None
    assert redis_keys_of(redis_client, keys, job.id) == named_snapshot_keys(keys, job)


def test_a_sweep_deletes_a_batch_and_the_next_one_the_rest(
    session: Session, redis_client: redis.Redis, keys: Keys
) -> None:
    policy = Policy.of(RetentionSettings(completed_s=60, batch=2, max_jobs=0))
    made = [
        _seed(session, redis_client, keys, JobStatus.COMPLETED, (100 + i) * S) for i in range(5)
    ]
    assert [sweep(session, redis_client, keys, policy, NOW) for _ in range(4)] == [2, 2, 1, 0]
    assert not any(_exists(session, j) for j in made)


def test_one_sweeper_at_a_time_and_locked_rows_are_skipped(
    sessions: sessionmaker[Session], session: Session, redis_client: redis.Redis, keys: Keys
) -> None:
    policy = Policy.of(TTL)
    first = _seed(session, redis_client, keys, JobStatus.COMPLETED, 7200 * S)
    second = _seed(session, redis_client, keys, JobStatus.COMPLETED, 7200 * S)
    with sessions() as other:
        other.execute(select(func.pg_advisory_xact_lock(*SWEEP_LOCK)))
        assert sweep(session, redis_client, keys, policy, NOW) == 0  # another is sweeping
        other.rollback()
        # A user deleting (or anyone holding the row) meanwhile: the sweep leaves that row.
        other.execute(select(Job).where(Job.id == first).with_for_update())
        assert sweep(session, redis_client, keys, policy, NOW) == 1
        assert _exists(session, first) and not _exists(session, second)
        other.rollback()
    assert sweep(session, redis_client, keys, policy, NOW) == 1
    assert not _exists(session, first)


@pytest.mark.spark
def test_a_workers_turn_sweeps_with_its_settings(
    spark: SparkSession,
    sessions: sessionmaker[Session],
    session: Session,
    redis_client: redis.Redis,
    keys: Keys,
) -> None:
    finished = datetime.now(UTC) - timedelta(hours=2)  # the worker's clock is the real one
    old = seed_job(session, redis_client, keys, principal="alice", finished_at=finished)
    recent = seed_job(session, redis_client, keys, principal="alice")
    worker = Worker(
        spark=spark,
        sessions=sessions,
        client=redis_client,
        keys=keys,
        engine_run=run_job,
        settings=WorkerSettings(poll_block_ms=10, claim_unannounced_after_s=3600),
        retention_settings=RetentionSettings(enabled=True, completed_s=3600),
    )
    worker.step()
    assert not _exists(session, old.id) and _exists(session, recent.id)
    assert redis_keys_of(redis_client, keys, old.id) == set()


def test_sweepers_racing_delete_each_due_job_once(
    sessions: sessionmaker[Session], session: Session, redis_client: redis.Redis, keys: Keys
) -> None:
    """Several workers (each API process or worker its own PostgreSQL session) sweeping at
    the same moment: every due job is deleted by exactly one of them, none fails."""
    policy = Policy(ttl=Policy.of(TTL).ttl, max_jobs=0, batch=3)
    made = [_seed(session, redis_client, keys, JobStatus.COMPLETED, 7200 * S) for _ in range(12)]
    deleted: list[int] = []
    start = threading.Barrier(4)

    def sweeper() -> None:
        start.wait()
        with sessions() as own:
            for _ in range(40):
                deleted.append(sweep(own, redis_client, keys, policy, NOW))

    threads = [threading.Thread(target=sweeper) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sum(deleted) == len(made)
    assert not any(_exists(session, j) for j in made)
