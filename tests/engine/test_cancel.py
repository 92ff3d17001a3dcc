"""A cancelled job stops using the cluster: no task of it keeps running after the cancel."""

from __future__ import annotations

import threading
import time
import uuid

import psutil
from pyspark.sql import SparkSession

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from tests.engine.conftest import job_body, run_runnable
from tests.polling import poll
from worker.engine import JobControl, RunnableJob


def spark_jvm(spark: SparkSession) -> psutil.Process:
    """The JVM of this test session's SparkSession (not any other Java process around)."""
    return psutil.Process(spark.sparkContext._gateway.proc.pid)  # type: ignore[union-attr]


def busy_cores(jvm: psutil.Process, *, over_s: float = 2.0) -> float:
    """Cores the JVM kept busy over ``over_s`` seconds (a task that ignored its kill: ~1)."""
    jvm.cpu_percent(None)
    time.sleep(over_s)  # a measurement window, not synchronisation
    return float(jvm.cpu_percent(None)) / 100


def cpu_seconds(jvm: psutil.Process) -> float:
    times = jvm.cpu_times()
    return float(times.user + times.system)


def test_a_cancelled_endless_sequence_leaves_no_task_running(spark: SparkSession) -> None:
    # The vertex's counted output takes rows one at a time: Spark's own range() went on
    # running after a kill behind such a consumer.
    body = job_body(
        [
            {"name": "numbers", "processor": "source.sequence", "params": {"count": 10**12}},
            {"name": "log", "processor": "sink.logger"},
        ],
        [{"from": "numbers", "to": "log"}],
        members=1,
        local_parallelism=1,
    )
    spec = JobSpec.model_validate(body)
    job = RunnableJob(
        id=uuid.uuid4(),
        attempt=1,
        plan=build_plan(validate_job(spec)).model_dump(mode="json"),
    )
    control = JobControl(job_group=f"cancel-{job.id}")
    ended: list[BaseException] = []

    def perform() -> None:
        spark.sparkContext.setJobGroup(control.job_group, "endless", True)
        try:
            run_runnable(spark, job, control)
        except BaseException as error:
            ended.append(error)

    jvm = spark_jvm(spark)
    thread = threading.Thread(target=perform, daemon=True)
    thread.start()
    tracker = spark.sparkContext.statusTracker()
    poll(lambda: bool(tracker.getActiveStageIds()), deadline_s=60, what="the job running")
    # CPU time the task burns, not a rate: a rate depends on what else the machine runs.
    started = cpu_seconds(jvm)
    poll(lambda: cpu_seconds(jvm) - started > 1.0, deadline_s=60, what="the task using CPU")
    control.cancelled.set()
    spark.sparkContext.cancelJobGroup(control.job_group)
    thread.join(timeout=30)
    assert not thread.is_alive() and ended, "run_job did not end after the cancel"
    idle = 0.0
    deadline = time.monotonic() + 30  # a loaded machine's kill takes a while to land
    while (idle := busy_cores(jvm, over_s=1.0)) > 0.3 and time.monotonic() < deadline:
        pass  # each round measures one second of CPU
    assert idle <= 0.3, f"{idle:.1f} cores still busy after the cancel: a task ignored its kill"
