"""Which workers are alive, told by something a dead process cannot keep: its session.

Each worker process has a row in ``workers`` and, on a connection of its own, holds the
session-level advisory lock ``(LOCK_SPACE, lock_key)`` and beats ``heartbeat_at``. When the
process dies (SIGKILL, the OOM killer, a crash) its kernel closes the connection and
PostgreSQL ends the session, releasing the lock at once; when its host dies (power, a
partition) the server's TCP keepalives (``SESSION_SETTINGS``) end the session within about
10 s. ``lost_workers`` finds the rows whose lock nobody holds and whose beat went silent;
``orchestration.requeue_lost`` queues their jobs again.

Why a lock and not the beat alone: a beat that stops may be a slow or hung process, which
only a lease can judge (it may wake and go on); a released session lock is a session that
ended. Why the beat too: a lock is briefly absent while a live worker reconnects its
liveness connection, and after PostgreSQL itself restarted every lock is gone: a worker is
lost only when its lock is gone *and* it has not beaten for ``silent_for``, and nobody judges
while the server (``pg_postmaster_start_time``) or the judge's own session is younger than
``settle``. A hung worker (SIGSTOP) keeps its session and its lock: its jobs wait for their
lease, and its late writes are refused by their fencing token.

A session-level advisory lock needs a session of its own: the liveness connection must not
go through a transaction-pooling proxy.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Connection, func, or_, select, text
from sqlalchemy.exc import ProgrammingError
from sqlalchemy.orm import Session

from jetspark.db.tables import Job
from jetspark.jobs.status import HELD_BY_WORKER, JobStatus

LOCK_SPACE = 0x4A534C57
"""The first key of every worker's liveness lock (``pg_advisory_lock(int, int)``), so that
they cannot meet the single-key advisory locks taken elsewhere (``pg_locks.objsubid`` 2)."""

SESSION_SETTINGS = (
    # A dead host is noticed by the server's keepalives: idle 5 s, then 3 probes 1 s apart.
    "SET tcp_keepalives_idle = 5",
    "SET tcp_keepalives_interval = 1",
    "SET tcp_keepalives_count = 3",
    "SET tcp_user_timeout = 8000",
    # The liveness session idles between beats: no server timeout may end it.
    "SET idle_session_timeout = 0",
    "SET idle_in_transaction_session_timeout = 0",
)


def register(conn: Connection, worker: str, *, host: str, pid: int) -> tuple[int, bool]:
    """Insert (or find) ``worker``'s row and take its lock on ``conn``, the worker's own
    autocommit connection. Returns the lock key and whether the lock is held (False only
    while a former session of this worker, cut off but not yet ended, still holds it)."""
    for setting in SESSION_SETTINGS:
        try:
            conn.execute(text(setting))
        except ProgrammingError:  # a server that lacks one (tcp_user_timeout: before 12)
            continue
    key = conn.execute(
        text(
            "INSERT INTO workers (id, host, pid) VALUES (:id, :host, :pid) "
            "ON CONFLICT (id) DO UPDATE SET heartbeat_at = now() RETURNING lock_key"
        ),
        {"id": worker, "host": host[:256], "pid": pid},
    ).scalar_one()
    conn.execute(text("SELECT pg_advisory_unlock_all()"))  # a lock of a former row's key
    return int(key), take_lock(conn, int(key))


def take_lock(conn: Connection, key: int) -> bool:
    """Take the liveness lock ``key`` on ``conn`` if it is free; True when held."""
    held = conn.execute(
        text("SELECT pg_try_advisory_lock(:space, :key)"), {"space": LOCK_SPACE, "key": key}
    ).scalar_one()
    return bool(held)


def beat(conn: Connection, worker: str) -> bool:
    """Stamp ``worker``'s beat on its liveness connection; False when its row is gone (it
    was taken for lost: the caller registers again)."""
    result = conn.execute(
        text("UPDATE workers SET heartbeat_at = now() WHERE id = :id"), {"id": worker}
    )
    return bool(result.rowcount)


def lost_workers(
    session: Session, *, silent_for: timedelta, settle: timedelta
) -> list[tuple[str, datetime]]:
    """Workers whose session ended: their lock is free and their beat silent for
    ``silent_for``; none while the server started less than ``settle`` ago. Each row is
    locked until the caller's transaction ends (``SKIP LOCKED``: one judge per lost worker).
    Returns (worker id, last beat)."""
    rows = session.execute(
        text(
            "SELECT w.id, w.heartbeat_at FROM workers AS w "
            "WHERE w.heartbeat_at < now() - make_interval(secs => :silent) "
            "AND pg_postmaster_start_time() < now() - make_interval(secs => :settle) "
            "AND NOT EXISTS ("
            "  SELECT 1 FROM pg_locks AS l"
            "  WHERE l.locktype = 'advisory'"
            "  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            "  AND l.classid = CAST(:space AS oid) AND l.objid = CAST(w.lock_key AS oid)"
            "  AND l.objsubid = 2 AND l.granted) "
            "ORDER BY w.id FOR UPDATE OF w SKIP LOCKED"
        ),
        {
            "silent": silent_for.total_seconds(),
            "settle": settle.total_seconds(),
            "space": LOCK_SPACE,
        },
    )
    return [(str(worker), at) for worker, at in rows]


def forget(session: Session | Connection, worker: str) -> None:
    """Remove ``worker``'s row (lost, or stopping cleanly); the caller commits."""
    session.execute(text("DELETE FROM workers WHERE id = :id"), {"id": worker})


def takeovers_on(session: Session, host: str) -> int:
    """Jobs of workers on ``host`` being taken over after their worker was lost: requeued
    (``holder_lost``) and not yet past the new attempt's first snapshot."""
    moving = [JobStatus.QUEUED.value, *(s.value for s in HELD_BY_WORKER)]
    count = session.execute(
        select(func.count())
        .select_from(Job)
        .where(
            Job.status.in_(moving),
            Job.worker.like(f"{host.replace('%', '')}:%"),
            Job.timings.has_key("holder_lost"),
            or_(~Job.timings.has_key("first_snapshot"), Job.timings.is_(None)),
        )
    ).scalar_one()
    return int(count)


def others_alive(session: Session, worker: str, *, within: timedelta) -> int:
    """Workers other than ``worker`` that beat within ``within``."""
    count = session.execute(
        text(
            "SELECT count(*) FROM workers "
            "WHERE id <> :id AND heartbeat_at > now() - make_interval(secs => :within)"
        ),
        {"id": worker, "within": within.total_seconds()},
    ).scalar_one()
    return int(count)
