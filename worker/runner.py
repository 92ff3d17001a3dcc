"""Run one claimed job in its own thread: RUNNING, the engine, then COMPLETED or FAILED.

The final write stores the ``sink.results`` records and the counts together with the status
change, under the job's fencing token, so a retry or a lost worker never duplicates results.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import JobResult
from jetspark.jobs import orchestration
from jetspark.jobs.orchestration import OrchestrationError
from jetspark.jobs.status import JobStatus
from worker.engine.contract import JobControl, JobOutcome, RunnableJob

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger("jetspark.worker")

EngineRun = Callable[["SparkSession", RunnableJob, JobControl], JobOutcome]


@dataclass
class HeldJob:
    """A job this worker holds under a lease."""

    job: RunnableJob
    entry_id: str
    fencing_token: int
    control: JobControl
    done: bool = False
    outcome_status: JobStatus | None = field(default=None)


def perform(
    held: HeldJob,
    *,
    spark: SparkSession,
    sessions: sessionmaker[Session],
    engine_run: EngineRun,
    worker: str,
) -> None:
    """The body of a job's thread. Never raises: every end is written to PostgreSQL."""
    job_id, token = held.job.id, held.fencing_token
    bind = log.bind(job=str(job_id), attempt=held.job.attempt)
    context = spark.sparkContext
    context.setJobGroup(held.control.job_group, f"jetspark job {job_id}", True)
    context.setLocalProperty("spark.scheduler.pool", "jetspark")
    try:
        _write(sessions, job_id, JobStatus.RUNNING, token, worker, "running")
        outcome = engine_run(spark, held.job, held.control)
        _complete(sessions, job_id, token, worker, outcome)
        held.outcome_status = JobStatus.COMPLETED
        bind.info("job completed", items_out=outcome.items_out)
    except OrchestrationError as refused:
        bind.info("job no longer ours", reason=str(refused))
    except Exception as error:
        if held.control.cancelled.is_set():
            bind.info("job stopped", reason="cancelled, suspended or lease lost")
        else:
            bind.warning("job failed", error=f"{type(error).__name__}: {error}")
            _fail(sessions, job_id, token, worker, error)
            held.outcome_status = JobStatus.FAILED
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        held.done = True


def _write(
    sessions: sessionmaker[Session],
    job_id: uuid.UUID,
    target: JobStatus,
    token: int,
    worker: str,
    cause: str,
    **fields: Any,
) -> None:
    with sessions() as session:
        orchestration.transition(
            session, job_id, target, cause=cause, worker=worker, fencing_token=token, **fields
        )
        session.commit()


def _complete(
    sessions: sessionmaker[Session],
    job_id: uuid.UUID,
    token: int,
    worker: str,
    outcome: JobOutcome,
) -> None:
    with sessions() as session:
        orchestration.transition(
            session,
            job_id,
            JobStatus.COMPLETED,
            cause="all vertices completed",
            worker=worker,
            fencing_token=token,
            items_in=outcome.items_in,
            items_out=outcome.items_out,
            vertex_counts={
                name: {"items_in": c.items_in, "items_out": c.items_out}
                for name, c in outcome.vertex_counts.items()
            },
        )
        seq = 0
        for vertex, items in outcome.results.items():
            for item in items:
                session.add(JobResult(job_id=job_id, seq=seq, vertex=vertex, item=item))
                seq += 1
        session.commit()


def _fail(
    sessions: sessionmaker[Session],
    job_id: uuid.UUID,
    token: int,
    worker: str,
    error: Exception,
) -> None:
    try:
        _write(
            sessions,
            job_id,
            JobStatus.FAILED,
            token,
            worker,
            "a processor failed",
            error_type=getattr(error, "error_type", type(error).__name__),
            error_message=str(error)[:4000],
        )
    except OrchestrationError as refused:
        log.info("failure not recorded: job no longer ours", job=str(job_id), reason=str(refused))
