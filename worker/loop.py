"""The worker's life: dequeue, claim, perform, heartbeat, reap, reconcile, sweep finished jobs
(retention) — until told to stop."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import redis
import structlog
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from jetspark import joblogs
from jetspark.dag.members import plan_for_executors
from jetspark.db.tables import Job
from jetspark.jobs import orchestration, retention
from jetspark.jobs.status import JobStatus
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient
from jetspark.retry import OutageLog, Retry, always
from jetspark.settings import RetentionSettings, StreamSettings, TenantSettings, WorkerSettings
from jetspark.spark_session import executor_count
from worker.engine.contract import RESULTS_CAP, JobControl, RedisTarget, RunnableJob
from worker.epoch_log import PgEpochLog
from worker.job_attempt import EngineRun, HeldJob, perform, timeout_of
from worker.live_metrics import MetricsReporting
from worker.liveness import Liveness, new_worker_id
from worker.reconciler import reconcile
from worker.warm_up import keep_python_workers

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger("jetspark.worker")


def _engine_of(sessions: sessionmaker[Session]) -> Engine:
    bind = sessions.kw.get("bind")
    if not isinstance(bind, Engine):
        raise TypeError("the worker's sessions must be bound to an Engine")
    return bind


class Worker:
    """One PySpark driver taking jobs from the stream; several jobs at once."""

    def __init__(
        self,
        *,
        spark: SparkSession,
        sessions: sessionmaker[Session],
        client: RedisClient,
        keys: Keys,
        engine_run: EngineRun,
        settings: WorkerSettings | None = None,
        worker_id: str | None = None,
        retention_settings: RetentionSettings | None = None,
        liveness: Liveness | None = None,
    ) -> None:
        self.spark = spark
        self.spark_application: str | None = _application_id(spark)
        """This worker's Spark application id (``app-...``, ``local-...``)."""
        self.sessions = sessions
        self.client = client
        self.keys = keys
        self.engine_run = engine_run
        self.settings = settings or WorkerSettings()
        self.snapshot_history = StreamSettings().snapshot_history
        """Snapshot records kept per job (``jetspark.jobs.snapshot_history``)."""
        self.max_running = TenantSettings().quota_running_jobs
        """Jobs of one principal held at once, by all workers (``JETSPARK_QUOTA_RUNNING_JOBS``)."""
        self.id = worker_id or new_worker_id()
        self.lease = timedelta(seconds=self.settings.lease_s)
        self.held: dict[uuid.UUID, HeldJob] = {}
        self.threads: dict[uuid.UUID, Future[None]] = {}
        """Each held job's thread (a future the pool may also cancel before it starts)."""
        self.pool = ThreadPoolExecutor(
            self.settings.max_concurrent_jobs + self.settings.takeover_slots,
            thread_name_prefix="job",
        )
        self.metrics = (
            MetricsReporting(client, keys, interval_s=self.settings.metrics_interval_s)
            if self.settings.metrics_enabled
            else None
        )
        self.busy: dict[str, tuple[stream.Entry, int]] = {}
        """Entries read while their job's row was locked, by entry id, with their tries."""
        self.stopping = threading.Event()
        self.slot_freed = threading.Event()
        """Set when a job's thread ends (and on ``stop``): a loop waiting with every slot
        taken takes the next job at once, not after a fixed pause."""
        self.redis_outage = OutageLog("worker heartbeat in Redis", log)
        self.turns = Retry("worker loop", logger=log, retry_on=always, stopping=self.stopping)
        """Waits out any error of a turn (a server away, a bug): a worker never dies of one."""
        self._next_heartbeat = 0.0
        self._next_reconcile = 0.0
        self.retention = retention_settings or RetentionSettings()
        self.retention_policy = retention.Policy.of(self.retention)
        self._next_sweep = 0.0
        self._next_keep_warm = time.monotonic() + self.settings.keep_warm_s
        self.liveness = liveness or Liveness(
            engine=_engine_of(sessions),
            sessions=sessions,
            client=client,
            keys=keys,
            worker_id=self.id,
            settings=self.settings,
        )
        """This worker's liveness lock and beat, and the judge of the others: a dead
        worker's jobs are requeued about a second after its death (started by ``run``, if
        not before)."""

    # -- the loop -----------------------------------------------------------------------
    def run(self) -> None:
        """Work until ``stop()``; then stop taking jobs and let running ones be reclaimed.
        The liveness lock is taken first and kept until ``close``."""
        self.liveness.start()
        log.info("worker started", worker=self.id)
        while not self.stopping.is_set():
            try:
                self.step()
            except Exception as error:  # only once asked to stop while an outage lasted
                log.info("worker loop ended in an outage", error=str(error)[:200])
        self.pool.shutdown(wait=False, cancel_futures=True)
        log.info("worker stopped", worker=self.id)

    def step(self) -> None:
        """One turn of the loop (tests drive it directly); an error is waited out with the
        retry policy, so this returns once a turn succeeded (or raises once stopping)."""
        self.turns(self.turn)

    def turn(self) -> None:
        self.slot_freed.clear()  # before counting free slots: a job ending later wakes us
        self.forget_finished()
        self.tend(time.monotonic())
        self.take_jobs()

    def tend(self, now: float) -> None:
        """The duties due by ``now``: heartbeat, reconcile, keep warm, sweep."""
        if now >= self._next_heartbeat:
            self.heartbeat()
            self._next_heartbeat = now + self.settings.heartbeat_s
        if now >= self._next_reconcile:
            self.reconcile()
            self._next_reconcile = now + self.settings.reconcile_interval_s
        if self.settings.keep_warm_s and not self.held and now >= self._next_keep_warm:
            keep_python_workers(self.spark)  # idle: Spark would stop them after a minute
            self._next_keep_warm = now + self.settings.keep_warm_s
        if self.retention.enabled and now >= self._next_sweep:
            # Set first: a sweep that fails (the turn is retried) waits for its next interval.
            self._next_sweep = now + self.retention.interval_s
            if self.sweep() >= self.retention_policy.batch:
                self._next_sweep = now  # more are due: the next turn sweeps again

    def take_jobs(self) -> None:
        """Claim what the free slots allow: resumed jobs first, then announced ones, then
        any queued job no announcement brought; with every slot taken, a resumed job only."""
        free = self.settings.max_concurrent_jobs - len(self.held)
        if self.liveness.thread is not None and not self.liveness.held.is_set():
            # Without our lock the others may take us for lost: take no job until it is held.
            self.liveness.held.wait(min(0.2, self.settings.heartbeat_s))
            return
        if free <= 0:
            # Every slot taken: a lost worker's job still starts now, in a takeover slot.
            room = free + self.settings.takeover_slots
            if room > 0 and self.claim_resumed(room):
                return
            self.slot_freed.wait(min(0.2, self.settings.heartbeat_s))
            return
        entries = self.take_busy(free) or self.reap(free)
        if not entries:
            # A job that ran before (its worker lost, stopped or hung) goes ahead of the new
            # ones the stream would hand out first: a stream's recovery waits for no backlog.
            free -= len(self.claim_resumed(free))
            if free <= 0:
                return
            entries = self.dequeue(free)
        for entry in entries:
            self.claim(entry)
        if not entries:
            self.claim_unannounced(free)

    def stop(self) -> None:
        self.stopping.set()
        self.slot_freed.set()

    def close(self) -> None:
        """End the liveness session (after ``drain``). A worker that still holds jobs keeps
        its row: the others take it for lost and requeue them at once."""
        self.liveness.stop(forget=not self.held)

    # -- the lifecycle ------------------------------------------------------------------
    def dequeue(self, count: int) -> list[stream.Entry]:
        block = min(self.settings.poll_block_ms, int(self.settings.heartbeat_s * 1000))
        return stream.read_new(self.client, self.keys, self.id, count=count, block_ms=block)

    def reap(self, count: int) -> list[stream.Entry]:
        """Entries a dead worker left idle past a lease."""
        idle_ms = int(self.settings.lease_s * 1000)
        return stream.reclaim_idle(
            self.client, self.keys, self.id, min_idle_ms=idle_ms, count=count
        )

    def take_busy(self, count: int) -> list[stream.Entry]:
        """Entries whose job row was locked when we tried them: they are tried again first."""
        taken = list(self.busy.values())[:count]
        return [entry for entry, _ in taken]

    def claim(self, entry: stream.Entry) -> HeldJob | None:
        """Claim in PostgreSQL (exactly one worker wins) and start performing."""
        with self.sessions() as session:
            try:
                job = orchestration.claim(
                    session,
                    entry.job_id,
                    worker=self.id,
                    lease=self.lease,
                    wait=timedelta(seconds=self.settings.claim_wait_s),
                    max_running=self.max_running,
                )
            except orchestration.JobBusy:
                self.keep_busy(entry)
                return None
            self.busy.pop(entry.entry_id, None)
            if job is not None:
                self.fit_plan(job)
            session.commit()
            if job is None:
                # Not claimable now (ended, held under a live lease, or a duplicate entry):
                # the reconciler re-announces it if it ever needs a worker again.
                stream.ack(self.client, self.keys, [entry.entry_id])
                return None
            return self.hold(job, entry.entry_id)

    def keep_busy(self, entry: stream.Entry) -> None:
        """Keep an entry whose row stayed locked (un-acked) to try again, a few times."""
        _, tries = self.busy.pop(entry.entry_id, (entry, 0))
        if tries < self.settings.busy_retries:
            self.busy[entry.entry_id] = (entry, tries + 1)
            log.info("job row busy: entry kept", job=str(entry.job_id), tries=tries + 1)
        else:  # still queued, it is found by ``claim_unannounced`` (or re-announced)
            stream.ack(self.client, self.keys, [entry.entry_id])

    def claim_unannounced(self, count: int) -> list[HeldJob]:
        """Claim jobs queued for a while that no announcement brought here (lost, dropped)."""
        return self.claim_from_postgres(
            count, timedelta(seconds=self.settings.claim_unannounced_after_s)
        )

    def claim_resumed(self, count: int) -> list[HeldJob]:
        """Claim queued jobs that ran before, as soon as they are queued again."""
        return self.claim_from_postgres(count, timedelta(0), resumed_only=True)

    def claim_from_postgres(
        self, count: int, older_than: timedelta, *, resumed_only: bool = False
    ) -> list[HeldJob]:
        with self.sessions() as session:
            jobs = orchestration.claim_queued(
                session,
                worker=self.id,
                lease=self.lease,
                older_than=older_than,
                limit=count,
                max_running=self.max_running,
                resumed_only=resumed_only,
            )
            for job in jobs:
                self.fit_plan(job)
            session.commit()
            return [self.hold(job, None) for job in jobs]

    def fit_plan(self, job: Job) -> None:
        """A job that left ``members`` unset runs on as many members as this worker's Spark
        application has executors; the plan is stored with the claim (SPEC §3)."""
        plan = plan_for_executors(job.plan, lambda: executor_count(self.spark))
        if plan is not None:
            job.plan = plan

    def hold(self, job: Job, entry_id: str | None) -> HeldJob:
        """Start performing a job just claimed (and committed)."""
        timings: dict[str, Any] = {
            "queued": (job.announced_at or job.created_at).isoformat(),
            "claimed": job.updated_at.isoformat(),
            # Where its Spark jobs are in Spark's UI or History Server (docs/SECURITY.md).
            "spark_application": self.spark_application,
            "spark_job_group": f"job-{job.id}",
        }
        lost = (job.timings or {}).get("holder_lost")
        if lost and lost.get("attempt") == job.attempt - 1:  # the last attempt's worker died
            timings["holder_lost"] = lost
        epochs = PgEpochLog(
            self.sessions,
            job.id,
            job.fencing_token,
            results_cap=RESULTS_CAP,
            principal=job.principal,
            timings=timings,
            attempt=job.attempt,
            history=self.snapshot_history,
        )
        held = HeldJob(
            job=RunnableJob(id=job.id, attempt=job.attempt, plan=job.plan or {}),
            entry_id=entry_id,
            fencing_token=job.fencing_token,
            control=JobControl(
                job_group=timings["spark_job_group"],
                job_id=job.id,
                epochs=epochs,
                snapshot_history=epochs,
                redis=RedisTarget.of_client(self.client, self.keys.namespace, job.principal),
                timings=timings,
            ),
        )
        timeout = timeout_of(held.job)
        if timeout:
            started = job.started_at.timestamp() if job.started_at else time.time()
            held.deadline = started + float(timeout)
        self.held[held.job.id] = held
        joblogs.register(self.client, self.keys, held.job.id)
        log.info("job claimed", job=str(held.job.id), attempt=held.job.attempt, worker=self.id)
        self.threads[held.job.id] = self.pool.submit(
            perform,
            held,
            spark=self.spark,
            sessions=self.sessions,
            engine_run=self.engine_run,
            worker=self.id,
            metrics=self.metrics,
            logs=(self.client, self.keys),
        )
        self.threads[held.job.id].add_done_callback(lambda _: self.slot_freed.set())
        return held

    def heartbeat(self) -> None:
        """Renew every lease; a refused renewal means stop that job now.

        The leases are in PostgreSQL: they are renewed whether Redis answers or not (the
        stream entries' idle times and the heartbeat key are tried again next time)."""
        alive: list[str] = []
        for held in list(self.held.values()):
            if held.done:
                continue
            if held.deadline is not None and time.time() >= held.deadline:
                self.time_out(held)
            with self.sessions() as session:
                renewed = orchestration.renew_lease(
                    session, held.job.id, fencing_token=held.fencing_token, lease=self.lease
                )
                session.commit()
            if renewed:
                if held.entry_id is not None:
                    alive.append(held.entry_id)
            elif not held.ending:  # else: its end was written (its thread says how)
                if not held.control.cancelled.is_set():
                    log.info("lease refused: stopping job", job=str(held.job.id))
                self.cancel(held)
        try:
            stream.touch(self.client, self.keys, self.id, alive)
            self.client.set(self.keys.worker_heartbeat(self.id), str(time.time()), ex=60)
        except redis.RedisError as error:
            self.redis_outage.failed(error)
        else:
            self.redis_outage.recovered()

    def cancel(self, held: HeldJob) -> None:
        """Stop a job's Spark work. Repeated until its thread ends: an action the thread
        starts after a cancel is not covered by that cancel."""
        held.abandoned.set()
        held.control.cancelled.set()
        self.spark.sparkContext.cancelJobGroup(held.control.job_group)

    def time_out(self, held: HeldJob) -> None:
        """``config.timeout_s`` passed: stop the job's work; its thread records FAILED
        (``JobTimeout``) under the lease we keep renewing. Repeated each heartbeat."""
        if not held.timed_out:
            log.info("job timed out", job=str(held.job.id))
        held.timed_out = True
        held.control.cancelled.set()
        self.spark.sparkContext.cancelJobGroup(held.control.job_group)

    def stop_running_jobs(self, *, deadline_s: float = 30.0) -> None:
        """Cancel every job this worker still runs and wait until their threads have ended."""
        deadline = time.monotonic() + deadline_s
        while running := [
            held for job_id, held in self.held.items() if not self.threads[job_id].done()
        ]:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(running)} job thread(s) still running")
            for held in running:
                self.cancel(held)
            time.sleep(0.05)  # the job threads unwind on their own; re-cancel until they have

    def forget_finished(self) -> None:
        for job_id, held in list(self.held.items()):
            if held.done:
                if held.outcome_status is JobStatus.QUEUED:  # handed over, or an outage's
                    self.announce(job_id)
                if held.entry_id is not None:
                    stream.ack(self.client, self.keys, [held.entry_id])
                del self.held[job_id]
                self.threads.pop(job_id, None)

    def announce(self, job_id: uuid.UUID) -> None:
        """Tell the workers of a job this one queued again (its ``announced_at`` was stamped
        then; should Redis not take it, an idle worker finds the job in PostgreSQL)."""
        stream.announce(self.client, self.keys, job_id)

    def drain(self, grace_s: float) -> None:
        """SIGTERM: take no more jobs (``run`` has returned); each stream commits a last
        snapshot and is handed over at once; a batch job may finish within ``grace_s``,
        then it is stopped and handed over too. Leases are renewed meanwhile."""
        for held in self.held.values():
            held.control.handover.set()
        deadline = time.monotonic() + grace_s
        give_up = deadline + max(10.0, self.settings.lease_s)
        retry = Retry("worker drain", logger=log, retry_on=always, deadline_s=give_up)
        while self.held and time.monotonic() < give_up:
            if time.monotonic() >= deadline:
                for held in self.held.values():
                    if not held.done:
                        held.control.cancelled.set()
                        self.spark.sparkContext.cancelJobGroup(held.control.job_group)
            try:
                retry(self.heartbeat)
                retry(self.forget_finished)
            except Exception as error:  # servers away past the bound: leases run out instead
                log.warning("drain ended in an outage", error=str(error)[:200])
                return
            time.sleep(min(0.2, self.settings.heartbeat_s))  # the job threads end on their own
        log.info("worker drained", worker=self.id, left=len(self.held))

    def reconcile(self) -> None:
        reconcile(
            sessions=self.sessions,
            client=self.client,
            keys=self.keys,
            reannounce_after=timedelta(seconds=self.settings.reannounce_after_s),
            lock_ttl=timedelta(seconds=self.settings.reconcile_interval_s),
            worker=self.id,
        )

    def sweep(self) -> int:
        """Delete one batch of finished jobs past their retention (``jetspark.jobs.retention``)."""
        with self.sessions() as session:
            return retention.sweep(
                session, self.client, self.keys, self.retention_policy, orchestration.now()
            )

    def job_status(self, job_id: uuid.UUID) -> str | None:
        with self.sessions() as session:
            job = session.get(Job, job_id)
            return job.status if job else None


def _application_id(spark: SparkSession) -> str | None:
    try:
        found = spark.sparkContext.applicationId
    except Exception:  # a session being stopped: the id only names where its jobs are
        return None
    return str(found) if found else None
