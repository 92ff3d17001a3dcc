"""Workers' liveness with real processes on a PostgreSQL of the module's own: a process
SIGKILLed is taken for lost about a second later and its jobs requeued; one SIGSTOPped keeps
its session and its lock, so only its lease can judge it; a PostgreSQL restart, which ends
every session, makes nobody lost, but a death during it is noticed once the server is back."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
import redis
from sqlalchemy import Engine, select, text
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.engine import make_engine
from jetspark.db.tables import Job, JobTransition, WorkerRow
from jetspark.jobs import liveness, orchestration
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from jetspark.settings import WorkerSettings
from tests.databases import fresh_database
from tests.faults.conftest import OwnPostgres
from tests.polling import poll

pytestmark = pytest.mark.timeout(300)

SETTINGS = WorkerSettings()
LEASE = timedelta(seconds=SETTINGS.lease_s)  # the default: nothing tuned
Process = subprocess.Popen[bytes]
NOTICED_WITHIN_S = 10.0
"""A lost worker's jobs are requeued within this (two thirds of the 15 s lease, so never by
the lease: about 1 s is usual, the rest is room for a loaded machine)."""
assert LEASE.total_seconds() > NOTICED_WITHIN_S  # never by the lease


@pytest.fixture
def url(request: pytest.FixtureRequest, server_database_url: str) -> Iterator[str]:
    """A database of the test's own; on the module's own PostgreSQL for a test that restarts
    it (its database is the module's: the test leaves no live worker behind)."""
    if "own_postgres" in request.fixturenames:
        yield request.getfixturevalue("own_database_url")
        return
    with fresh_database(server_database_url, "jetspark_liveness") as made:
        yield made


@pytest.fixture
def engine(url: str) -> Iterator[Engine]:
    made = make_engine(url, pool_size=2)
    yield made
    made.dispose()


@pytest.fixture
def sessions(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@pytest.fixture
def keys() -> Keys:
    return Keys(f"liveness-{uuid.uuid4().hex[:6]}")


@pytest.fixture
def spawn(url: str, redis_url: str, keys: Keys) -> Iterator[Callable[[str], Process]]:
    """Start a process that holds ``worker``'s liveness until it is killed."""
    started: list[Process] = []

    def start(worker: str) -> Process:
        argv = [sys.executable, "-m", "tests.faults.liveness_process"]
        argv += [url, redis_url, keys.namespace, worker]
        started.append(subprocess.Popen(argv))
        return started[-1]

    yield start
    for process in started:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGCONT)
            process.kill()
        process.wait(timeout=10)


def lock_held(sessions: sessionmaker[Session], worker: str) -> bool:
    with sessions() as session:
        found = session.execute(
            text(
                "SELECT count(*) FROM workers AS w JOIN pg_locks AS l"
                " ON l.locktype = 'advisory' AND l.classid = CAST(:space AS oid)"
                " AND l.objid = CAST(w.lock_key AS oid) AND l.objsubid = 2 AND l.granted"
                " WHERE w.id = :id"
            ),
            {"space": liveness.LOCK_SPACE, "id": worker},
        ).scalar_one()
        return bool(found)


def held_job(
    sessions: sessionmaker[Session], client: redis.Redis, keys: Keys, worker: str
) -> uuid.UUID:
    """A job ``worker`` claimed, with its stream entry pending on ``worker``'s consumer."""
    with sessions() as session:
        job = Job(name="held", definition={"name": "held"})
        session.add(job)
        orchestration.record_creation(session, job)
        session.commit()
        stream.ensure_group(client, keys)
        stream.announce(client, keys, job.id)
        (entry,) = stream.read_new(client, keys, worker, count=1, block_ms=0)
        assert entry.job_id == job.id
        assert orchestration.claim(session, job.id, worker=worker, lease=LEASE) is not None
        session.commit()
        return job.id


def job_of(sessions: sessionmaker[Session], job_id: uuid.UUID) -> Job:
    with sessions() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job


def last_rule(sessions: sessionmaker[Session], job_id: uuid.UUID) -> str | None:
    with sessions() as session:
        return session.execute(
            select(JobTransition.rule)
            .where(JobTransition.job_id == job_id)
            .order_by(JobTransition.id.desc())
            .limit(1)
        ).scalar_one()


def consumers(client: redis.Redis, keys: Keys) -> set[str]:
    found = client.xinfo_consumers(keys.jobs_stream, keys.workers_group)
    return {str(c["name"]) for c in found}


def test_a_sigkilled_worker_is_lost_within_a_second_or_so_and_its_jobs_requeued(
    spawn: Callable[[str], Process],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
) -> None:
    victim, survivor = f"victim-{uuid.uuid4().hex[:6]}", f"survivor-{uuid.uuid4().hex[:6]}"
    doomed = spawn(victim)
    spawn(survivor)
    poll(lambda: lock_held(sessions, victim) and lock_held(sessions, survivor), what="locks")
    job_id = held_job(sessions, redis_client, keys, victim)
    assert victim in consumers(redis_client, keys)

    doomed.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    poll(
        lambda: job_of(sessions, job_id).status == "QUEUED",
        what="the dead worker's job requeued",
        deadline_s=NOTICED_WITHIN_S,
    )
    noticed_s = time.monotonic() - killed
    job = job_of(sessions, job_id)
    assert last_rule(sessions, job_id) == "holder-lost"
    assert job.fencing_token == 2 and job.lease_expires_at is None
    assert job.timings and job.timings["holder_lost"]["worker"] == victim
    with sessions() as session:
        assert session.get(WorkerRow, victim) is None, "the lost worker is forgotten"
        assert session.get(WorkerRow, survivor) is not None
    # Announced again, and the dead consumer's stale entry dropped with it.
    poll(lambda: victim not in consumers(redis_client, keys), what="consumer forgotten")
    announced = [fields for _, fields in redis_client.xrange(keys.jobs_stream) or []]
    assert {stream.JOB_FIELD: str(job_id)} in announced
    print(f"kill -> requeued: {noticed_s:.2f} s (lease {LEASE.total_seconds():g} s)")


def test_a_stopped_worker_keeps_its_lock_and_is_left_to_its_lease(
    spawn: Callable[[str], Process],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
) -> None:
    hung, judge = f"hung-{uuid.uuid4().hex[:6]}", f"judge-{uuid.uuid4().hex[:6]}"
    stopped = spawn(hung)
    spawn(judge)
    poll(lambda: lock_held(sessions, hung) and lock_held(sessions, judge), what="locks")
    job_id = held_job(sessions, redis_client, keys, hung)

    os.kill(stopped.pid, signal.SIGSTOP)  # hung: its session (and lock) lives on

    def silent() -> bool:
        with sessions() as session:
            beat = session.execute(
                select(WorkerRow.heartbeat_at).where(WorkerRow.id == hung)
            ).scalar_one()
            now = session.execute(select(text("now()"))).scalar_one()
            return bool(now - beat > timedelta(seconds=4 * SETTINGS.liveness_lost_after_s))

    poll(silent, what="the stopped worker's beat silent", deadline_s=30)
    # The judge process has looked many times since the beat went silent: the lock says alive.
    assert lock_held(sessions, hung)
    with sessions() as session:
        lost = liveness.lost_workers(
            session,
            silent_for=timedelta(seconds=SETTINGS.liveness_lost_after_s),
            settle=timedelta(0),
        )
        assert hung not in {worker for worker, _ in lost}
    job = job_of(sessions, job_id)
    assert job.status == "STARTING" and job.worker == hung and job.fencing_token == 1

    os.kill(stopped.pid, signal.SIGCONT)
    poll(lambda: not silent(), what="the worker beats again", deadline_s=30)
    assert job_of(sessions, job_id).fencing_token == 1


def test_a_postgresql_restart_loses_nobody_but_a_death_meanwhile_is_noticed(
    spawn: Callable[[str], Process],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
    own_postgres: OwnPostgres,
) -> None:
    names = [f"{role}-{uuid.uuid4().hex[:6]}" for role in ("a", "b", "doomed")]
    processes = {name: spawn(name) for name in names}
    poll(lambda: all(lock_held(sessions, n) for n in names), what="locks", deadline_s=30)
    jobs = {name: held_job(sessions, redis_client, keys, name) for name in names}

    own_postgres.stop()  # every session ends: every lock is gone at once
    processes[names[2]].kill()
    processes[names[2]].wait()
    own_postgres.start()

    poll(
        lambda: lock_held(sessions, names[0]) and lock_held(sessions, names[1]),
        what="the live workers hold their locks again",
        deadline_s=30,
    )
    poll(
        lambda: job_of(sessions, jobs[names[2]]).status == "QUEUED",
        what="the worker that died meanwhile taken for lost",
        deadline_s=SETTINGS.liveness_settle_s + NOTICED_WITHIN_S,  # within the lease still
    )
    assert last_rule(sessions, jobs[names[2]]) == "holder-lost"
    for name in names[:2]:
        job = job_of(sessions, jobs[name])
        assert (job.status, job.worker, job.fencing_token) == ("STARTING", name, 1), name


def test_a_takeover_on_this_host_is_seen_until_its_first_snapshot(
    spawn: Callable[[str], Process], sessions: sessionmaker[Session]
) -> None:
    host = socket.gethostname()
    lost, judge = f"{host}:1:{uuid.uuid4().hex[:6]}", f"{host}:2:{uuid.uuid4().hex[:6]}"
    spawn(judge)
    poll(lambda: lock_held(sessions, judge), what="the judge's lock")
    with sessions() as session:
        job = Job(name="moving", definition={"name": "moving"})
        session.add(job)
        orchestration.record_creation(session, job)
        session.commit()
        assert orchestration.claim(session, job.id, worker=lost, lease=LEASE)
        session.commit()
        assert liveness.takeovers_on(session, host) == 0  # held, its worker not lost
        orchestration.requeue_lost(session, lost, by=judge, cause="lost", last_seen=None)
        session.commit()
        assert liveness.takeovers_on(session, host) == 1
        assert liveness.takeovers_on(session, f"not-{host}") == 0
        assert liveness.others_alive(session, lost, within=timedelta(seconds=2)) == 1
        assert liveness.others_alive(session, judge, within=timedelta(seconds=2)) == 0
        taken = orchestration.claim(session, job.id, worker=judge, lease=LEASE)
        assert taken is not None
        taken.timings = {**(taken.timings or {}), "first_snapshot": "2026-01-01T00:00:00+00:00"}
        session.commit()
        assert liveness.takeovers_on(session, host) == 0
