"""A worker's liveness (``jetspark.jobs.liveness``) on a thread of its own: it holds this
worker's lock and beats, and it looks for workers whose session ended and requeues their
jobs, so a dead worker's jobs are running elsewhere about a second after its death instead
of after its lease.

Its own thread, because the worker's loop may block (a claim waiting for a row, a read of
the jobs stream, a retention sweep) and a judge that waited on those would notice a death
that much later; the beat does not depend on the loop either (a hung loop is the lease's to
judge, not the lock's).
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
import uuid
from datetime import timedelta

import redis
import structlog
from sqlalchemy import Connection, Engine
from sqlalchemy.orm import Session, sessionmaker

from jetspark.jobs import liveness, orchestration
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient
from jetspark.retry import OutageLog
from jetspark.settings import WorkerSettings

log = structlog.get_logger("jetspark.worker")


def new_worker_id() -> str:
    """``host:pid:random``: the host and pid say where it runs, the rest tells restarts apart."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class Liveness:
    """This worker's lock and beat, and the judge of the others."""

    def __init__(
        self,
        *,
        engine: Engine,
        sessions: sessionmaker[Session],
        client: RedisClient,
        keys: Keys,
        worker_id: str,
        settings: WorkerSettings,
    ) -> None:
        self.engine, self.sessions = engine, sessions
        self.client, self.keys = client, keys
        self.id = worker_id
        self.settings = settings
        self.conn: Connection | None = None
        self.lock_key: int | None = None
        self.held = threading.Event()
        """Set while this worker's lock is held: the loop claims jobs only then (a worker
        the others may take for lost must not take jobs)."""
        self.session_since: float | None = None
        """When (``time.monotonic``) the liveness session was opened again: a judge whose
        session was cut (a network cut, the server restarted) gives the others
        ``liveness_settle_s`` to come back before it judges them. None for the process's
        first session: a new worker judges at once (the server's own start is checked in
        ``lost_workers``), so a replacement finds its predecessor lost as it starts."""
        self.sessions_opened = 0
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.outage = OutageLog("worker liveness in PostgreSQL", log)

    # -- the thread -----------------------------------------------------------------------
    def start(self) -> None:
        """Register and take the lock now (the loop claims nothing before), then beat and
        judge every ``liveness_interval_s`` on a thread."""
        if self.thread is not None:
            return
        self.beat()
        self.thread = threading.Thread(target=self.run, name="liveness", daemon=True)
        self.thread.start()

    def run(self) -> None:
        while True:
            if self.judging():
                self.requeue_lost()
            if self.stopping.wait(self.settings.liveness_interval_s):
                return
            self.beat()

    def stop(self, *, forget: bool = True) -> None:
        """Stop beating and end the session (the lock with it); with ``forget``, remove this
        worker's row first, else the others take it for lost (and requeue what it holds)."""
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout=5)
        try:
            if forget and self.conn is not None:
                liveness.forget(self.conn, self.id)
        except Exception as error:  # the row is judged lost later, with no jobs left to it
            log.info("worker row not removed", worker=self.id, error=str(error)[:200])
        self.drop()

    # -- this worker ----------------------------------------------------------------------
    def beat(self) -> None:
        """Stamp the beat, taking the lock when it is not held; a session that ended is
        opened again at once. Never raises: PostgreSQL away is waited out (the lock is not
        held meanwhile, and the loop claims nothing)."""
        try:
            try:
                self.beat_once()
            except Exception:
                self.drop()  # the session ended (a cut, a server restart): a new one now
                self.beat_once()
        except Exception as error:
            self.drop()
            self.outage.failed(error)
        else:
            self.outage.recovered()

    def beat_once(self) -> None:
        if self.conn is None:
            self.connect()
        elif not liveness.beat(self.conn, self.id):
            log.warning("this worker was taken for lost: registering again", worker=self.id)
            self.held.clear()
            self.register(self.conn)
        elif (
            not self.held.is_set()
            and self.lock_key is not None
            and liveness.take_lock(self.conn, self.lock_key)
        ):
            self.held.set()

    def connect(self) -> None:
        conn = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        conn.detach()  # the session is this worker's life: never returned to the pool
        self.conn = conn
        self.sessions_opened += 1
        self.session_since = time.monotonic() if self.sessions_opened > 1 else None
        self.register(conn)

    def register(self, conn: Connection) -> None:
        self.lock_key, held = liveness.register(
            conn, self.id, host=socket.gethostname(), pid=os.getpid()
        )
        if held:
            self.held.set()
        else:  # a former session of ours, cut off, still holds it until the server ends it
            log.info("liveness lock still held by a former session", worker=self.id)

    def drop(self) -> None:
        self.held.clear()
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.invalidate()  # closes the DBAPI connection: the session ends
            except Exception as error:
                log.debug("liveness connection close failed", error=str(error)[:200])

    # -- the others ---------------------------------------------------------------------
    def judging(self) -> bool:
        if not self.held.is_set():
            return False
        since = self.session_since
        return since is None or time.monotonic() - since >= self.settings.liveness_settle_s

    def requeue_lost(self) -> list[uuid.UUID]:
        """Requeue the jobs of every worker whose session ended, forget those workers, and
        announce the jobs. Never raises (tried again at the next beat)."""
        try:
            with self.sessions() as session:
                lost = liveness.lost_workers(
                    session,
                    silent_for=timedelta(seconds=self.settings.liveness_lost_after_s),
                    settle=timedelta(seconds=self.settings.liveness_settle_s),
                )
                requeued: list[uuid.UUID] = []
                for worker, last_seen in lost:
                    jobs = orchestration.requeue_lost(
                        session,
                        worker,
                        by=self.id,
                        cause=f"worker {worker} lost: its database session ended",
                        last_seen=last_seen,
                    )
                    liveness.forget(session, worker)
                    requeued.extend(jobs)
                    log.warning(
                        "worker lost: its jobs requeued",
                        lost=worker,
                        last_seen=last_seen.isoformat(),
                        jobs=[str(j) for j in jobs],
                    )
                session.commit()
        except Exception as error:
            log.warning("looking for lost workers failed", error=str(error)[:300])
            return []
        for worker, _ in lost:
            self.forget_consumer(worker)
        for job_id in requeued:
            self.announce(job_id)
        return requeued

    def announce(self, job_id: uuid.UUID) -> None:
        """Wake a free worker now; if Redis does not take it, an idle worker finds the job
        QUEUED in PostgreSQL (``claim_unannounced``)."""
        try:
            stream.announce(self.client, self.keys, job_id)
        except redis.RedisError as error:
            log.info("requeued job not announced", job=str(job_id), error=str(error)[:200])

    def forget_consumer(self, worker: str) -> None:
        """The lost worker's stream entries are hints of jobs now announced again."""
        try:
            stream.forget_consumer(self.client, self.keys, worker)
        except redis.RedisError as error:
            log.info("lost worker's consumer left", worker=worker, error=str(error)[:200])


def yield_to_takeovers(
    sessions: sessionmaker[Session], worker_id: str, *, deadline_s: float
) -> float:
    """Before a new worker starts its JVM: while another live worker is taking over the jobs
    of a lost worker of this host, wait (at most ``deadline_s``). Two workers sharing two
    cores, the replacement of a dead one would otherwise take, starting Spark, the CPU the
    other needs to restore and run the stream it took over. Returns the seconds waited;
    never raises."""
    host, started = socket.gethostname(), time.monotonic()
    beating = timedelta(seconds=2)
    while time.monotonic() - started < deadline_s:
        try:
            with sessions() as session:
                if not liveness.takeovers_on(session, host) or not liveness.others_alive(
                    session, worker_id, within=beating
                ):
                    break
        except Exception as error:  # PostgreSQL away: nothing to wait for that we can see
            log.info("takeovers not looked at", error=str(error)[:200])
            break
        time.sleep(0.5)  # another process's takeover, bounded by the deadline
    waited = time.monotonic() - started
    if waited >= 0.5:
        log.info("started after a takeover on this host", waited_s=round(waited, 2))
    return waited
