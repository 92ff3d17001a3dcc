"""A new worker's warm-up: the engine runs a small windowed stream into every common sink on
the real SparkSession, in a few epochs whatever the worker's epoch sizes, then leaves nothing
behind (no files, no map, no snapshot)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import redis
from pyspark.sql import SparkSession
from structlog.testing import capture_logs

from jetspark.dag.errors import DagValidationError
from jetspark.dag.model import JobSpec
from jetspark.jobs.accept import AcceptRules, accept
from jetspark.settings import DataSettings
from worker.engine.contract import RedisTarget
from worker.warm_up import PRINCIPAL, warm_up, warm_up_job, warm_up_plan


def test_the_warm_up_runs_every_sink_and_leaves_nothing(
    spark: SparkSession,
    redis_client: redis.Redis,
    redis_url: str,
    redis_namespace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The operator's data roots do not hold the warm-up's temporary folder (the tests'
    # default root, the temporary directory, hid that a real `jetspark up` refused it).
    monkeypatch.setenv("JETSPARK_DATA_ROOTS", str(tmp_path / "data"))
    # The worker's own epoch sizes do not stretch the warm-up: with 40 items an epoch it ran
    # ten epochs, not three (two workers starting at once took two minutes to warm up).
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "40")
    namespace = f"{redis_namespace}-warm-up"
    # A temporary directory of this test's own: other test processes' workers warm up too.
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    with capture_logs() as lines:
        seconds = warm_up(spark, RedisTarget(redis_url, namespace))
    assert seconds > 0
    events = [line["event"] for line in lines]
    assert "warm-up failed: the first job runs cold" not in events, lines
    assert "worker warmed up" in events
    assert 2 <= events.count("epoch ran") <= 4, events
    # The stream wrote to its map under the warm-up's own principal, and that map is gone.
    assert not list(redis_client.scan_iter(f"{namespace}:*")), "the warm-up left keys"
    assert PRINCIPAL != "legacy"
    assert not list((tmp_path / "tmp").iterdir()), "the warm-up left files"


def test_the_warm_up_is_planned_as_accept_plans_with_its_own_data_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = warm_up_job(str(tmp_path / "out"), "warm-up-map")
    # Under the operator's roots, ``accept`` refuses the warm-up's temporary folder ...
    monkeypatch.setenv("JETSPARK_DATA_ROOTS", str(tmp_path / "data"))
    with pytest.raises(DagValidationError, match="not under a data root"):
        accept(JobSpec.model_validate(body), AcceptRules())
    # ... and with that folder as its root, it plans what the warm-up runs.
    monkeypatch.setenv("JETSPARK_DATA_ROOTS", str(tmp_path))
    accepted = accept(JobSpec.model_validate(body), AcceptRules())
    assert warm_up_plan(body, DataSettings(roots=[str(tmp_path)])) == accepted.plan
