"""``run_local``: a DAG run in this process, on a local SparkSession, by the workers' engine.

For unit tests of a user's DAG without servers (``from worker.local_run import run_local``):
the same validation, plan and engine (``worker.engine``) a worker uses, imported only when a
DAG is run, so this module imports without pyspark. Streaming jobs run their epochs against
an epoch log kept in memory (what a worker keeps in PostgreSQL), so their results are
readable while they run.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import tenacity

from jetspark.sdk.dag import DAG, accept_offline
from jetspark.settings import DagLimits

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]
    from pyspark.sql import SparkSession

    from worker.engine.contract import EpochCommit, JobOutcome, SnapshotRecord

LOCAL_PRINCIPAL = "local"
"""The owner of a local run's Redis maps and streams (``<namespace>:user:local:...``)."""


@dataclass
class LocalRun:
    """What a local run produced: ``sink.results`` records per vertex, in order, and per
    vertex ``(items_in, items_out)``. Read while a stream runs (``until``)."""

    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    snapshots: int = 0
    """Snapshots committed (streams with a processing guarantee)."""
    epochs: int = 0
    """Epochs committed (streams)."""
    cancelled: bool = False
    """Stopped by ``until`` before its sources were exhausted."""

    def items(self, vertex: str | None = None) -> list[dict[str, Any]]:
        """One sink's records, or every sink's, in the order they were kept."""
        if vertex is not None:
            return list(self.results.get(vertex, []))
        return [item for items in self.results.values() for item in items]

    def to_pandas(self, vertex: str | None = None) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame.from_records(self.items(vertex))


class MemoryEpochLog:
    """The ``EpochLog`` of a local stream: epochs, results and snapshots in memory."""

    def __init__(self, run: LocalRun) -> None:
        self.run = run
        self.lock = threading.Lock()
        self.snapshots: list[SnapshotRecord] = []
        self.plans: dict[int, dict[str, Any]] = {}

    def restore_point(self) -> SnapshotRecord | None:
        return self.snapshots[-1] if self.snapshots else None

    def named_snapshot(self, name: str) -> SnapshotRecord | None:
        return None  # a local run has no exported snapshots

    def planned_ranges(self, epoch: int) -> dict[str, Any] | None:
        return self.plans.get(epoch)

    def plan_epoch(self, epoch: int, ranges: dict[str, Any], fingerprint: str) -> None:
        self.plans[epoch] = ranges

    def reset(self) -> None:
        with self.lock:
            self.run.results.clear()
            self.snapshots.clear()
            self.plans.clear()

    def commit(self, commit: EpochCommit) -> list[SnapshotRecord]:
        with self.lock:
            for vertex, items in commit.results.items():
                self.run.results.setdefault(vertex, []).extend(items)
            self.run.counts = {n: (c.items_in, c.items_out) for n, c in commit.counts.items()}
            self.run.epochs += 1
            if commit.snapshot is None:
                return []
            older, self.snapshots = self.snapshots, [commit.snapshot]
            self.run.snapshots += 1
            return older


def run_local(
    dag: DAG | Mapping[str, Any],
    *,
    spark: SparkSession | None = None,
    redis_url: str | None = None,
    namespace: str = "jetspark-local",
    limits: DagLimits | None = None,
    until: Callable[[LocalRun], bool] | None = None,
    timeout_s: float = 600,
) -> LocalRun:
    """Validate, plan and run ``dag`` here; return its results.

    ``spark``: the session to run on (default: the active one, else a new ``local[2]``).
    ``redis_url``: the Redis that snapshots and Redis sources and sinks use (default:
    ``JETSPARK_REDIS_URL``); names are the user's, under ``<namespace>:user:local:``.
    ``until``: for a stream that never ends (a Redis stream source): stop it once
    ``until(run)`` is true. Raises ``TimeoutError`` after ``timeout_s``, and the job's own
    error (``VertexFailed`` naming the vertex) when it fails.
    """
    from worker.engine import JobControl, run_job
    from worker.engine.contract import RedisTarget

    job = dag if isinstance(dag, DAG) else DAG.from_json(dag)
    # The plan ``DAG.validate()``'s checks built: accepted and planned once, as a server does.
    plan = accept_offline(job, limits).plan
    job_id = uuid.uuid4()
    run = LocalRun()
    configured = RedisTarget.from_settings()  # JETSPARK_REDIS_CLUSTER applies to a given URL
    redis = RedisTarget(
        redis_url if redis_url is not None else configured.url,
        namespace,
        LOCAL_PRINCIPAL,
        cluster=configured.cluster,
    )
    control = JobControl(
        job_group=f"local-{job_id}",
        job_id=job_id,
        epochs=MemoryEpochLog(run),
        redis=redis,
    )
    session = spark if spark is not None else _session()
    ended: list[JobOutcome | BaseException] = []

    def target() -> None:
        try:
            ended.append(run_job(session, plan, control))
        except BaseException as error:  # handed to the caller's thread below
            ended.append(error)

    runner = threading.Thread(target=target, name=f"local-{job_id}", daemon=True)
    runner.start()
    _poll(lambda: bool(ended) or (until is not None and until(run)), timeout_s, control)
    if not ended:  # ``until`` said enough: stop the stream at its next epoch
        control.cancelled.set()
        run.cancelled = True
    runner.join(timeout=timeout_s)
    outcome = ended[0] if ended else TimeoutError(f"the job did not stop in {timeout_s} s")
    if isinstance(outcome, BaseException):
        if run.cancelled and type(outcome).__name__ == "JobCancelled":
            return run
        raise outcome
    for vertex, items in outcome.results.items():
        run.results.setdefault(vertex, []).extend(items)
    run.counts = {n: (c.items_in, c.items_out) for n, c in outcome.vertex_counts.items()}
    return run


def _poll(done: Callable[[], bool], timeout_s: float, control: Any) -> None:
    """Until ``done()``, backing off up to half a second; cancel the job at the deadline."""
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_result(lambda finished: not finished),
        wait=tenacity.wait_exponential(multiplier=0.01, max=0.5),
        stop=tenacity.stop_after_delay(timeout_s),
    )
    try:
        retrying(done)
    except tenacity.RetryError:
        control.cancelled.set()
        raise TimeoutError(f"the job did not end within {timeout_s} s") from None


def _session() -> SparkSession:
    from pyspark.sql import SparkSession

    from jetspark.spark_session import build_spark_session

    active = SparkSession.getActiveSession()
    return active if active is not None else build_spark_session(master="local[2]")
