"""What a job's ops need from the worker comes through its control, not the environment."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from jetspark.settings import DataSettings
from tests.engine.conftest import job_body, run_runnable
from worker.engine import JobControl, RunnableJob
from worker.engine.runner import VertexFailed

pytestmark = pytest.mark.spark


def _run(spark: SparkSession, out: Path, roots: list[str]) -> None:
    body = job_body(
        [
            {"name": "src", "processor": "source.items", "params": {"items": [{"v": 1}]}},
            {"name": "out", "processor": "sink.files",
             "params": {"path": str(out), "format": "json"}},
        ],
        [{"from": "src", "to": "out"}],
    )  # fmt: skip
    spec = JobSpec.model_validate(body)  # the environment's roots (the temp dir) allow it
    plan = build_plan(validate_job(spec))
    job = RunnableJob(uuid.uuid4(), 1, plan.model_dump(mode="json"))
    control = JobControl(job_group=f"ctx-{job.id}", data=DataSettings(roots=roots))
    run_runnable(spark, job, control)


def test_sink_files_is_held_to_the_data_roots_of_its_jobs_control(spark: SparkSession) -> None:
    with tempfile.TemporaryDirectory() as allowed, tempfile.TemporaryDirectory() as other:
        inside, outside = Path(allowed) / "out", Path(other) / "out"
        _run(spark, inside, [allowed])
        assert list(inside.glob("*.json"))
        with pytest.raises(VertexFailed, match=r"sink\.files"):
            _run(spark, outside, [allowed])
        assert not outside.exists()
