"""Placeholder until the engine lands: refuses every job with a clear error."""

from __future__ import annotations

from typing import TYPE_CHECKING

from worker.engine.contract import JobControl, JobOutcome, RunnableJob

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def run_job(spark: SparkSession, job: RunnableJob, control: JobControl) -> JobOutcome:
    raise NotImplementedError("the execution engine is not built yet")
