"""Run a job's plan on Spark: once over bounded input (``execution``), or epoch by epoch
when it streams (``epoch_loop``); both walk the plan with ``execution.Execution``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jetspark.dag.plan import ExecutionPlan
from worker.engine.contract import JobControl, JobOutcome, stamp
from worker.engine.epoch_loop import epoch_session, run_stream
from worker.engine.execution import Execution, JobCancelled, VertexFailed, run_vertices

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["JobCancelled", "VertexFailed", "run_job"]


def run_job(spark: SparkSession, plan: ExecutionPlan, control: JobControl) -> JobOutcome:
    """Run the job's plan, as the API built it: once over bounded input, or epoch by epoch
    when it streams (``ExecutionPlan.runs_in_epochs``). Nothing is validated or planned
    again here."""
    control.timings["planned"] = stamp()
    # Both sides of a join are hash-partitioned on the processor slot alone; let Spark join
    # them in place rather than reshuffle on every join key.
    spark.conf.set("spark.sql.requireAllClusterKeysForCoPartition", "false")
    if plan.runs_in_epochs:
        return run_stream(epoch_session(spark), plan, control)
    execution = Execution(spark, plan, control)
    control.counts = execution.counters.counts
    try:
        run_vertices(execution)
    finally:
        execution.release()
    return JobOutcome(
        results=dict(execution.sink_results),
        vertex_counts=execution.counters.counts(),
        sources=plan.sources,
        sinks=plan.sinks,
    )
