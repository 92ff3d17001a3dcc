"""A streaming ``hash_join`` keeps its build side from epoch to epoch: over 20 epochs it
equals the batch join of the same items, and its probe items wait for a build side that is
still being read (priorities across epochs)."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from typing import Any

import pytest
from pyspark.sql import SparkSession

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from tests.engine.conftest import RunDag, job_body, run_runnable
from worker.engine import JobControl, RunnableJob

pytestmark = pytest.mark.spark

BUILD, PROBE, PER_EPOCH = 200, 2000, 100
"""The build side takes 2 epochs, the probe side 20."""


def join_stream(*, how: str, streaming: bool) -> dict[str, Any]:
    """Build items ``{k: seq % 100, b: seq}``, probe items ``{pk: seq % 120, p: seq}``; as
    rate-limited sequences (a stream) or plain bounded ones (a batch job)."""
    rate = {"rate_per_s": 10_000_000} if streaming else {}
    return job_body(
        [
            {"name": "builds", "processor": "source.sequence",
             "params": {"count": BUILD, **rate}},
            {"name": "build", "processor": "map",
             "params": {"select": {"k": "seq % 100", "b": "seq"}}},
            {"name": "probes", "processor": "source.sequence",
             "params": {"count": PROBE, **rate}},
            {"name": "probe", "processor": "map",
             "params": {"select": {"pk": "seq % 120", "p": "seq"}}},
            {"name": "join", "processor": "hash_join",
             "params": {"build_key": "k", "probe_key": "pk", "how": how}},
            {"name": "out", "processor": "sink.results", "local_parallelism": 1},
        ],
        [
            {"from": "builds", "to": "build"},
            {"from": "probes", "to": "probe"},
            {"from": "build", "to": "join", "to_ordinal": 0, "priority": 0,
             "routing": "partitioned", "key": "k", "distributed": True},
            {"from": "probe", "to": "join", "to_ordinal": 1, "priority": 1,
             "routing": "partitioned", "key": "pk", "distributed": True},
            {"from": "join", "to": "out"},
        ],
        members=1,
        local_parallelism=2,
    )  # fmt: skip


def reference(how: str) -> Counter[tuple[int, int, int | None, int | None]]:
    """(pk, p, k, b) of every joined row, computed in Python."""
    builds: dict[int, list[int]] = {}
    for seq in range(BUILD):
        builds.setdefault(seq % 100, []).append(seq)
    rows: Counter[tuple[int, int, int | None, int | None]] = Counter()
    for p in range(PROBE):
        matches = builds.get(p % 120, [])
        rows.update((p % 120, p, p % 120, b) for b in matches)
        if not matches and how == "left":
            rows[(p % 120, p, None, None)] += 1
    return rows


def joined_rows(records: list[dict[str, Any]]) -> Counter[tuple[Any, ...]]:
    return Counter((r["pk"], r["p"], r.get("k"), r.get("b")) for r in records)


@pytest.mark.parametrize("how", ["inner", "left"])
def test_a_streaming_hash_join_over_20_epochs_equals_the_batch_join(
    spark: SparkSession, run_dag: RunDag, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_EPOCH_INTERVAL_MS", "1")
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", str(PER_EPOCH))
    batch, _ = run_dag(join_stream(how=how, streaming=False))
    assert joined_rows(batch.results["out"]) == reference(how)

    spec = JobSpec.model_validate(join_stream(how=how, streaming=True))
    job = RunnableJob(
        id=uuid.uuid4(),
        attempt=1,
        plan=build_plan(validate_job(spec)).model_dump(mode="json"),
    )
    control = JobControl(job_group=f"test-{job.id}", cancelled=threading.Event())
    stream = run_runnable(spark, job, control)
    assert control.marks is not None and control.marks().epoch >= PROBE // PER_EPOCH  # 20 epochs
    assert joined_rows(stream.results["out"]) == joined_rows(batch.results["out"])
    assert stream.vertex_counts["join"].items_in == BUILD + PROBE
