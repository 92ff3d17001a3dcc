"""DAG execution on Spark. ``run_job`` is the worker's one entry point."""

from worker.engine.contract import JobControl, JobOutcome, RunnableJob, VertexCounts
from worker.engine.runner import run_job

__all__ = ["JobControl", "JobOutcome", "RunnableJob", "VertexCounts", "run_job"]
