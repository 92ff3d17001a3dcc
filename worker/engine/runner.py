"""Run a job's plan on Spark: walk the vertices in order, route each inbound edge, apply ops.

Inbound edges are handed to a vertex sorted by priority (lower number consumed first): a
hash join's build side is ready before its probe side is read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import EdgePlan, ExecutionPlan, build_plan
from jetspark.dag.processors import PROCESSORS
from jetspark.dag.validate import validate_job
from worker.engine.contract import JobControl, JobOutcome, RunnableJob, VertexCounts
from worker.engine.ops import OPS, EngineError, OpContext
from worker.engine.python.failure import processor_failure
from worker.engine.routing import route

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class JobCancelled(Exception):
    """The worker asked the job to stop (cancel, suspend, restart or a lost lease)."""


class VertexFailed(Exception):
    """A processor failed; the message names the vertex, the error type and its message."""

    def __init__(self, vertex: str, error: BaseException) -> None:
        self.vertex = vertex
        self.error_type = getattr(error, "error_type", type(error).__name__)
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        super().__init__(f"vertex {vertex!r} failed: {self.error_type}: {message}")


def run_job(spark: SparkSession, job: RunnableJob, control: JobControl) -> JobOutcome:
    spec = JobSpec.model_validate(job.definition)
    dag = validate_job(spec)
    plan = ExecutionPlan.model_validate(job.plan) if job.plan else build_plan(dag)
    frames: dict[str, DataFrame] = {}
    outcome = JobOutcome()
    sink_results: dict[str, list[dict[str, object]]] = {}
    for name in plan.order:
        if control.cancelled.is_set():
            raise JobCancelled(f"job {job.id} was asked to stop")
        vertex = plan.vertex(name)
        op = OPS.get(vertex.processor)
        if op is None:
            raise VertexFailed(name, EngineError(f"{vertex.processor} is not supported yet"))
        edges = sorted(plan.inbound(name), key=lambda e: (e.priority, e.to_ordinal))
        try:
            inbound = sorted(edges, key=lambda e: e.to_ordinal)
            inputs = [
                route(
                    outbound_frame(frames[e.source], e),
                    e,
                    plan.vertex(e.source),
                    vertex,
                    plan.partition_count,
                )
                for e in inbound
            ]
            context = OpContext(
                spark=spark,
                vertex=vertex,
                params=dag.params[name],
                inputs=inputs,
                results_cap=control.results_cap,
                sink_results=sink_results,
                inbound=inbound,
                outbound=sorted(
                    (e for e in plan.edges if e.source == name), key=lambda e: e.from_ordinal
                ),
            )
            frames[name] = op.apply(context)
            if PROCESSORS[vertex.processor].role == "sink":
                _run_sink(name, frames[name], sink_results, outcome)
        except (JobCancelled, VertexFailed):
            raise
        except Exception as error:
            if control.cancelled.is_set():
                raise JobCancelled(f"job {job.id} was asked to stop") from error
            failed = processor_failure(error)
            if failed is not None:  # a Python processor failed inside a Spark task
                raise VertexFailed(*failed) from error
            raise VertexFailed(name, error) from error
    outcome.results = {k: v for k, v in sink_results.items()}
    return outcome


def outbound_frame(frame: DataFrame, edge: EdgePlan) -> DataFrame:
    """The rows an op emitted to ``edge``: all, or those whose ``__ordinal`` is its ordinal."""
    if "__ordinal" not in frame.columns:
        return frame
    return frame.where(F.col("__ordinal") == edge.from_ordinal).drop("__ordinal")


def _run_sink(
    name: str,
    frame: DataFrame,
    sink_results: dict[str, list[dict[str, object]]],
    outcome: JobOutcome,
) -> None:
    """Count what reached the sink (``sink.results`` already collected its records)."""
    kept = sink_results.get(name)
    count = frame.count() if kept is None else len(kept)
    outcome.vertex_counts[name] = VertexCounts(items_in=count, items_out=0)
