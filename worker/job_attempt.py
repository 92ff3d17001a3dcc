"""One attempt of a claimed job, in its own thread: RUNNING, the engine, then COMPLETED or FAILED.

The final write stores the ``sink.results`` records and the counts together with the status
change, under the job's fencing token, so a retry or a lost worker never duplicates results.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog
from sqlalchemy.orm import Session, sessionmaker

from jetspark import spark_pools
from jetspark.dag.plan import ExecutionPlan
from jetspark.joblogs import EXCEPTION_KEY, exception_chain, job_logs
from jetspark.jobs import orchestration, service
from jetspark.jobs.orchestration import RULE_NAMED, OrchestrationError, Rule
from jetspark.jobs.status import JobStatus
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient
from jetspark.retry import Retry, is_outage
from jetspark.settings import JobLogSettings
from worker.engine.contract import JobControl, JobOutcome, RunnableJob, VertexCounts
from worker.engine.python.live import PROCESSORS_KEY
from worker.engine.python.task_logs import TASK_LOGS_KEY, task_logs_property
from worker.engine.work_names import job_description
from worker.live_metrics import JobReporter, MetricsReporting
from worker.results import ResultsWriter
from worker.spark_pipelines import SparkPipelines
from worker.timings import spark_jobs, stamp

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

log = structlog.get_logger("jetspark.worker")

START, REQUEUE, FAIL = RULE_NAMED["start"], RULE_NAMED["requeue"], RULE_NAMED["fail"]
"""The rules an attempt moves its job by (besides ``finish``, with its results)."""

EngineRun = Callable[["SparkSession", ExecutionPlan, JobControl], JobOutcome]


@dataclass
class HeldJob:
    """A job this worker holds under a lease."""

    job: RunnableJob
    entry_id: str | None
    """Its stream entry; None when it was claimed straight from PostgreSQL."""
    fencing_token: int
    control: JobControl
    done: bool = False
    outcome_status: JobStatus | None = field(default=None)
    deadline: float | None = None
    """Wall-clock time (``time.time()``) after which ``config.timeout_s`` fails the job."""
    timed_out: bool = False
    ending: bool = False
    """Set by the job's thread once its run is over, before it writes how the job ended: a
    renewal refused from then on is that write taking effect (or a lost lease, which the
    write itself is refused for), not a reason to stop the job."""
    abandoned: threading.Event = field(default_factory=threading.Event)
    """Set when the job is no longer ours to write (lease refused, worker stopping): its
    final writes stop waiting for PostgreSQL to come back."""


class PlanUnreadable(Exception):
    """The job has no plan this version runs (one an earlier version stored and migration
    0013 could not upgrade): it fails naming why, and is submitted again."""

    error_type = "PlanUnreadable"


def runnable_plan(job: RunnableJob) -> ExecutionPlan:
    """The job's stored plan, as the engine runs it."""
    if not job.plan:
        raise PlanUnreadable(
            "the job has no plan this version can run (stored by an earlier version and not "
            "upgradable): submit it again"
        )
    return ExecutionPlan.model_validate(job.plan)


def timeout_of(job: RunnableJob) -> float | None:
    """The job's ``config.timeout_s``, read from its stored plan (the job's config as the
    API accepted it)."""
    limit = (job.plan.get("config") or {}).get("timeout_s")
    return float(limit) if limit else None


class JobTimeout(Exception):
    """The job ran longer than its ``config.timeout_s``."""

    error_type = "JobTimeout"


MAX_ERROR_CHARS = 4000
"""A job's recorded error message is cut to this length."""
MAX_CHAIN_CHARS = 8000
"""Each message and traceback of a failure's recorded exception chain is cut to this."""


def sanitize(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """Error text PostgreSQL can store: no NUL (text and jsonb refuse it), bounded length."""
    cleaned = text.replace("\x00", "\\0").encode("utf-8", "replace").decode("utf-8")
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def perform(
    held: HeldJob,
    *,
    spark: SparkSession,
    sessions: sessionmaker[Session],
    engine_run: EngineRun,
    worker: str,
    metrics: MetricsReporting | None = None,
    logs: tuple[RedisClient, Keys] | None = None,
) -> None:
    """The body of a job's thread. Never raises: every end is written to PostgreSQL.

    With ``metrics``, the job's live metrics are published while it runs and its final
    document is stored with its last status (or, once a user cancelled it, beside it). With
    ``logs`` (a Redis client and its keys), every line logged in this thread, and every line
    its Python processors log or print in their Spark tasks, is kept with the job
    (``jetspark.joblogs``, ``worker.engine.python.task_logs``).
    """
    if logs is None:
        _perform(held, spark=spark, sessions=sessions, engine_run=engine_run, worker=worker,
                 metrics=metrics)  # fmt: skip
        return
    context = spark.sparkContext
    # The job's Spark tasks (Python processors) keep their own lines too (``task_logs``).
    context.setLocalProperty(TASK_LOGS_KEY, task_logs_property(held.job.id, JobLogSettings()))
    try:
        with job_logs(*logs, held.job.id):
            _perform(held, spark=spark, sessions=sessions, engine_run=engine_run, worker=worker,
                     metrics=metrics)  # fmt: skip
    finally:
        context.setLocalProperty(TASK_LOGS_KEY, None)  # type: ignore[arg-type]


def _perform(
    held: HeldJob,
    *,
    spark: SparkSession,
    sessions: sessionmaker[Session],
    engine_run: EngineRun,
    worker: str,
    metrics: MetricsReporting | None,
) -> None:
    job_id, token = held.job.id, held.fencing_token
    bind = log.bind(job=str(job_id), attempt=held.job.attempt)
    context = spark.sparkContext
    context.setJobGroup(held.control.job_group, job_description(job_id), True)
    reporter = _start_reporting(metrics, held, spark)
    durable = Retry(f"job {job_id}: writing to PostgreSQL", logger=bind, stopping=held.abandoned)
    try:
        durable(_write, sessions, job_id, START, token, worker, "running")
        held.control.timings["running"] = stamp()
        # The plan as the API built it (and migration 0013 upgraded): read, never re-planned.
        plan = runnable_plan(held.job)
        # Set before the job's first Spark work (nothing before it runs any on this thread).
        context.setLocalProperty("spark.scheduler.pool", spark_pools.pool_for(plan.runs_in_epochs))
        outcome = engine_run(spark, plan, held.control)
        held.ending = True
        held.control.timings["computed"] = stamp()
        final = _final(reporter, outcome.vertex_counts)
        durable(
            _complete,
            sessions,
            job_id,
            token,
            worker,
            outcome,
            final,
            _timings(held, context),
            held.control.results_cap,
        )
        held.outcome_status = JobStatus.COMPLETED
        bind.info("job completed", items_out=outcome.items_out)
    except OrchestrationError as refused:
        bind.info("job no longer ours", reason=str(refused))
    except Exception as raised:
        held.ending = True
        error: Exception = raised
        if held.timed_out:
            limit = timeout_of(held.job)
            error = JobTimeout(f"the job ran longer than its timeout_s ({limit} s)")
        if held.control.handover.is_set() and not held.abandoned.is_set():
            # Our worker is stopping: hand the job over now rather than after the lease.
            bind.info("job handed over", reason=str(error)[:200])
            if _requeue(durable, sessions, job_id, token, worker, error, "worker stopping"):
                held.outcome_status = JobStatus.QUEUED
        elif held.control.cancelled.is_set() and not held.timed_out:
            bind.info("job stopped", reason="cancelled, suspended or lease lost")
        elif is_outage(error) and not held.abandoned.is_set():
            # A server blinked under the engine: not the job's fault. Queue it again; its
            # next attempt resumes from its last snapshot (a batch job from its start).
            bind.warning("job interrupted by an outage: requeued", error=str(error)[:300])
            if _requeue(durable, sessions, job_id, token, worker, error, "outage"):
                held.outcome_status = JobStatus.QUEUED
        else:
            bind.warning(
                "job failed",
                error=f"{type(error).__name__}: {str(error)[:1000]}",
                **{EXCEPTION_KEY: error},
            )
            _fail(
                durable,
                sessions,
                job_id,
                token,
                worker,
                error,
                _final(reporter),
                _timings(held, context),
            )
            held.outcome_status = JobStatus.FAILED
    finally:
        if reporter is not None:
            context.setLocalProperty(PROCESSORS_KEY, None)  # type: ignore[arg-type]
            _keep_if_cancelled(sessions, held, _final(reporter))
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        held.done = True


def _start_reporting(
    metrics: MetricsReporting | None, held: HeldJob, spark: SparkSession
) -> JobReporter | None:
    if metrics is None:
        return None
    context = spark.sparkContext
    try:
        pipelines = SparkPipelines(spark, job_description(held.job.id))
        reporter = JobReporter(
            metrics, held.job, held.control, pipelines, cores=context.defaultParallelism
        ).start()
    except Exception as error:  # metrics never stop a job
        log.warning("live metrics off for this job", job=str(held.job.id), error=str(error))
        return None
    context.setLocalProperty(PROCESSORS_KEY, reporter.processors_key)
    return reporter


def _final(
    reporter: JobReporter | None, counts: Mapping[str, VertexCounts] | None = None
) -> dict[str, Any] | None:
    if reporter is None:
        return None
    try:
        return reporter.finish(counts).model_dump(mode="json")
    except Exception as error:
        log.warning("final metrics lost", job=str(reporter.job.id), error=str(error))
        return None


def _timings(held: HeldJob, context: SparkContext) -> dict[str, Any]:
    """The run's timings so far, with the Spark jobs it ran."""
    timings = held.control.timings
    since = timings.get("claimed")
    return {**timings, "spark_jobs": spark_jobs(context, held.control.job_group, since)}


def _keep_if_cancelled(
    sessions: sessionmaker[Session], held: HeldJob, final: dict[str, Any] | None
) -> None:
    """A user's cancel ended the job without us: keep this attempt's final metrics beside it."""
    if final is None or held.outcome_status is not None:
        return
    try:
        with sessions() as session:
            service.keep_final_metrics(session, held.job.id, held.job.attempt, final)
            session.commit()
    except Exception as error:
        log.warning("final metrics not kept", job=str(held.job.id), error=str(error))


def _write(
    sessions: sessionmaker[Session],
    job_id: uuid.UUID,
    rule: Rule,
    token: int,
    worker: str,
    cause: str,
    **fields: Any,
) -> None:
    """Move the job by ``rule`` (to its target), as this attempt's holder."""
    with sessions() as session:
        orchestration.transition(
            session,
            job_id,
            rule.target,
            rule=rule.name,
            cause=cause,
            worker=worker,
            fencing_token=token,
            **fields,
        )
        session.commit()


def _complete(
    sessions: sessionmaker[Session],
    job_id: uuid.UUID,
    token: int,
    worker: str,
    outcome: JobOutcome,
    metrics: dict[str, Any] | None,
    timings: dict[str, Any],
    results_cap: int,
) -> None:
    with sessions() as session:
        job = orchestration.transition(
            session,
            job_id,
            JobStatus.COMPLETED,
            rule="finish",
            cause="all vertices completed",
            worker=worker,
            fencing_token=token,
            metrics=metrics,
            items_in=outcome.items_in,
            items_out=outcome.items_out,
            vertex_counts={
                name: {"items_in": c.items_in, "items_out": c.items_out}
                for name, c in outcome.vertex_counts.items()
            },
        )
        ResultsWriter(job_id, results_cap).write(session, outcome.results)
        # Stamped in the same transaction: the view that says COMPLETED has its results.
        job.timings = {**timings, "results_written": stamp(), "finished": stamp()}
        session.commit()


def _requeue(
    durable: Retry,
    sessions: sessionmaker[Session],
    job_id: uuid.UUID,
    token: int,
    worker: str,
    error: Exception,
    why: str,
) -> bool:
    """Queue the job again for another attempt; True once recorded (the worker announces it)."""
    cause = sanitize(f"{why}: {type(error).__name__}: {error}", 500)
    try:
        stamp = orchestration.now()  # the worker announces it right after
        durable(_write, sessions, job_id, REQUEUE, token, worker, cause, announced_at=stamp)
        return True
    except OrchestrationError as refused:
        log.info("requeue not recorded: job no longer ours", job=str(job_id), reason=str(refused))
    except Exception as failed:  # given up (worker stopping): the lease runs out instead
        log.warning("requeue not recorded", job=str(job_id), error=str(failed)[:300])
    return False


def _fail(
    durable: Retry,
    sessions: sessionmaker[Session],
    job_id: uuid.UUID,
    token: int,
    worker: str,
    error: Exception,
    metrics: dict[str, Any] | None,
    timings: dict[str, Any],
) -> None:
    """Record FAILED; if that write is refused for its content, record a minimal FAILED, so
    a job never goes back to a worker over and over because its failure could not be kept."""
    error_type = sanitize(str(getattr(error, "error_type", type(error).__name__)), 200)
    try:
        try:
            durable(
                _write,
                sessions,
                job_id,
                FAIL,
                token,
                worker,
                "a processor failed",
                error_type=error_type,
                error_message=sanitize(str(error)),
                error_chain=[
                    {k: sanitize(v, MAX_CHAIN_CHARS) for k, v in link.items()}
                    for link in exception_chain(error)
                ],
                metrics=metrics,
                timings={**timings, "finished": stamp()},
            )
        except OrchestrationError:
            raise
        except Exception as refused:
            if is_outage(refused):
                raise
            log.warning(
                "failure recorded without its details",
                job=str(job_id),
                error=f"{type(refused).__name__}: {str(refused)[:300]}",
            )
            durable(
                _write,
                sessions,
                job_id,
                FAIL,
                token,
                worker,
                "a processor failed",
                error_type=error_type,
                error_message=f"{error_type} (its message could not be stored: "
                f"{type(refused).__name__})",
            )
    except OrchestrationError as refused:
        log.info("failure not recorded: job no longer ours", job=str(job_id), reason=str(refused))
    except Exception as failed:  # given up (worker stopping): the lease runs out instead
        log.warning("failure not recorded", job=str(job_id), error=str(failed)[:300])
