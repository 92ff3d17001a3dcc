"""Run a job's plan on Spark: once over bounded input (``execution``), or epoch by epoch
when it streams (``streaming.loop``); both walk the plan with ``execution.Execution``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import ExecutionPlan, build_plan, planned_dag, with_spec
from jetspark.dag.validate import ValidatedDag, validate_job
from worker.engine.contract import JobControl, JobOutcome, RunnableJob
from worker.engine.execution import Execution, JobCancelled, VertexFailed, run_vertices
from worker.engine.ops.table import op_type
from worker.engine.streaming.loop import epoch_session, run_stream
from worker.timings import stamp

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["JobCancelled", "VertexFailed", "run_job", "runs_in_epochs"]


def runs_in_epochs(dag: ValidatedDag, plan: ExecutionPlan) -> bool:
    """Streaming jobs, and jobs whose processors need event time, run in epochs."""
    for name in plan.order:
        kind = dag.kind(name)
        if kind.needs_event_time or (
            kind.role == "source" and op_type(kind.name).unbounded(dag.params[name])
        ):
            return True
    return plan.job_config.initial_snapshot is not None


def engine_input(job: RunnableJob) -> tuple[ValidatedDag, ExecutionPlan]:
    """The DAG and plan the engine runs: read back from the stored plan alone. The submitted
    definition is read only for an engine-level run (no plan) or a plan stored before it
    carried the job's config (then completed from the definition, never re-planned)."""
    plan = ExecutionPlan.model_validate(job.plan) if job.plan else None
    dag = planned_dag(plan) if plan is not None else None
    if dag is not None and plan is not None:
        return dag, plan
    spec = JobSpec.model_validate(job.definition)
    if plan is None:
        dag = validate_job(spec)
        return dag, build_plan(dag)
    plan = with_spec(plan, spec)
    return planned_dag(plan) or validate_job(spec), plan


def run_job(spark: SparkSession, job: RunnableJob, control: JobControl) -> JobOutcome:
    """Run the job's plan: once over bounded input, or epoch by epoch when it streams."""
    dag, plan = engine_input(job)
    control.timings["planned"] = stamp()
    # Both sides of a join are hash-partitioned on the processor slot alone; let Spark join
    # them in place rather than reshuffle on every join key.
    spark.conf.set("spark.sql.requireAllClusterKeysForCoPartition", "false")
    if runs_in_epochs(dag, plan):
        return run_stream(epoch_session(spark), job, control, dag=dag, plan=plan)
    execution = Execution(spark, plan, dag, control)
    control.counts = execution.counters.counts
    try:
        run_vertices(execution, job)
    finally:
        execution.release()
    roles = {name: dag.kind(name).role for name in plan.order}
    return JobOutcome(
        results=dict(execution.sink_results),
        vertex_counts=execution.counters.counts(),
        sources=[n for n in plan.order if not plan.inbound(n)],
        sinks=[n for n, role in roles.items() if role == "sink"],
    )
