"""The epoch engine on the shared SparkSession: bounded rate-limited streams end by themselves."""

from __future__ import annotations

import threading
import uuid
from itertools import pairwise
from typing import Any

import pytest
from pyspark.sql import SparkSession

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from tests.engine.conftest import RunDag, job_body, run_runnable
from worker.engine import JobControl, RunnableJob
from worker.engine.streaming.epoch_size import FIRST_EPOCH_ITEMS

pytestmark = pytest.mark.spark


def test_a_rate_limited_sequence_runs_in_epochs_and_keeps_every_item(
    run_dag: RunDag, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_EPOCH_INTERVAL_MS", "200")
    body = job_body(
        [
            {
                "name": "src",
                "processor": "source.sequence",
                "params": {"count": 600, "rate_per_s": 1000},
                "local_parallelism": 2,
            },
            {
                "name": "wm",
                "processor": "insert_watermarks",
                "params": {"timestamp": "ts", "allowed_lag_ms": 0},
                "local_parallelism": 2,
            },
            {"name": "out", "processor": "sink.results", "local_parallelism": 1},
        ],
        [{"from": "src", "to": "wm"}, {"from": "wm", "to": "out"}],
        members=1,
    )
    outcome, _ = run_dag(body)
    seqs = sorted(r["seq"] for r in outcome.results["out"])
    assert seqs == list(range(600))
    assert outcome.vertex_counts["out"].items_in == 600


def windowed_body(window: dict[str, Any], *, count: int) -> dict[str, Any]:
    """Events ``ts = seq * 7`` keyed by ``seq % 5``, windowed over epochs of 400 items."""
    return job_body(
        [
            {
                "name": "src",
                "processor": "source.sequence",
                "params": {"count": count, "rate_per_s": 10_000_000},
            },
            {
                "name": "events",
                "processor": "map",
                "params": {"select": {"seq": "seq", "ts": "seq * 7", "k": "seq % 5"}},
            },
            {
                "name": "wm",
                "processor": "insert_watermarks",
                "params": {"timestamp": "ts", "allowed_lag_ms": 100},
            },
            {
                "name": "win",
                "processor": "window",
                "params": {
                    "timestamp": "ts",
                    "key": "k",
                    "aggregations": {"n": "count(*)", "total": "sum(seq)"},
                    **window,
                },
            },
            {"name": "out", "processor": "sink.results", "local_parallelism": 1},
        ],
        [
            {"from": "src", "to": "events"},
            {"from": "events", "to": "wm"},
            {"from": "wm", "to": "win", "routing": "partitioned", "key": "k"},
            {"from": "win", "to": "out"},
        ],
        members=1,
        local_parallelism=2,
    )


def reference(window: dict[str, Any], count: int) -> dict[tuple[int, int, int], tuple[int, int]]:
    """(start, end, key) -> (count, sum of seq), computed in Python from the same events."""
    out: dict[tuple[int, int, int], list[int]] = {}
    size, slide = window["size_ms"], window.get("slide_ms", window["size_ms"])
    for seq in range(count):
        ts, key = seq * 7, seq % 5
        for start in range(ts - ts % slide - size + slide, ts + 1, slide):
            if start <= ts < start + size:
                out.setdefault((start, start + size, key), []).append(seq)
    return {w: (len(s), sum(s)) for w, s in out.items()}


def _sessions(
    events: list[tuple[int, int, int]], gap: int
) -> dict[tuple[int, int, int], tuple[int, int]]:
    """Per key, items closer than ``gap`` form a session [first ts, last ts + gap)."""
    out: dict[tuple[int, int, int], tuple[int, int]] = {}
    for key in {k for _, k, _ in events}:
        mine = sorted((ts, seq) for ts, k, seq in events if k == key)
        start, last, members = mine[0][0], mine[0][0], [mine[0][1]]
        for ts, seq in mine[1:]:
            if ts - last >= gap:
                out[(start, last + gap, key)] = (len(members), sum(members))
                start, members = ts, []
            last = ts
            members.append(seq)
        out[(start, last + gap, key)] = (len(members), sum(members))
    return out


@pytest.mark.parametrize(
    "window",
    [
        {"type": "tumbling", "size_ms": 1000},
        {"type": "sliding", "size_ms": 1000, "slide_ms": 250},
        {"type": "session", "gap_ms": 30},
    ],
    ids=["tumbling", "sliding", "session"],
)
def test_windows_over_epochs_equal_a_python_reference(
    run_dag: RunDag, monkeypatch: pytest.MonkeyPatch, window: dict[str, Any]
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_EPOCH_INTERVAL_MS", "1")
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "400")
    count = 1200 if window["type"] != "session" else 600
    body = windowed_body(window, count=count)
    if window["type"] == "session":  # gaps: every 50th item comes 40 ms later
        body["dag"]["vertices"][1]["params"]["select"]["ts"] = "seq * 7 + (seq div 50) * 40"
    outcome, _ = run_dag(body)
    got = {
        (r["window_start"], r["window_end"], r["key"]): (r["n"], r["total"])
        for r in outcome.results["out"]
    }
    assert len(got) == len(outcome.results["out"]), "a window was emitted twice"
    if window["type"] == "session":
        events = [(seq * 7 + (seq // 50) * 40, seq % 5, seq) for seq in range(count)]
        expected = _sessions(events, window["gap_ms"])
    else:
        expected = reference(window, count)
    assert got == expected


def _epochs_of(spark: SparkSession, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Run ``body`` in its own Spark job group (the sampled epochs list its Spark jobs) and
    return its epochs' profiles."""
    spec = JobSpec.model_validate(body)
    job = RunnableJob(
        id=uuid.uuid4(),
        attempt=1,
        plan=build_plan(validate_job(spec)).model_dump(mode="json"),
    )
    control = JobControl(job_group=f"test-{job.id}", cancelled=threading.Event())
    spark.sparkContext.setJobGroup(control.job_group, "profiled", True)
    try:
        run_runnable(spark, job, control)
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    epochs: list[dict[str, Any]] = control.timings["epochs"]
    return epochs


def test_each_epoch_says_where_its_time_went(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_EPOCH_INTERVAL_MS", "1")
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "400")
    body = windowed_body({"type": "tumbling", "size_ms": 50}, count=1200)
    body["config"].update(processing_guarantee="exactly_once", snapshot_interval_ms=1)
    epochs = _epochs_of(spark, body)
    assert [e["epoch"] for e in epochs] == list(range(1, len(epochs) + 1))  # all kept (< 13)
    assert sum(e["items"] for e in epochs) == 1200
    for e in epochs[:3]:  # the first epochs are sampled: their Spark jobs are listed
        assert e["spark_s"] <= e["run_s"] + e["checkpoint_s"] + 0.05  # clocks differ
        assert e["driver_s"] >= 0
        if e["items"]:
            assert e["spark_jobs"] >= 1 and e["spark_stages"] >= e["spark_jobs"]
    for e in epochs:  # every epoch took a snapshot (interval 1 ms)
        assert e["snapshot_s"] is not None and e["state_rows"] is not None
    assert epochs[-1]["state_rows"] == 0  # the last epoch emitted every window
    assert any(e["state_rows"] > 0 and e["state_bytes"] > 0 for e in epochs)


def test_a_backlog_is_read_in_epochs_sized_by_time(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All 250,000 items are due at once: with the default target the attempt's first epoch
    reads 100,000 and each next one at most twice the last; with the target off, one epoch
    reads everything (max_items_per_epoch is 2,000,000)."""
    monkeypatch.setenv("JETSPARK_STREAM_EPOCH_INTERVAL_MS", "1")
    body = windowed_body({"type": "tumbling", "size_ms": 1000}, count=250_000)
    del body["dag"]["vertices"][0]["params"]["rate_per_s"]  # every item due at once
    read = [e["items"] for e in _epochs_of(spark, body) if e["items"]]
    assert read[0] == FIRST_EPOCH_ITEMS and sum(read) == 250_000, read
    assert all(b <= 2 * a for a, b in pairwise(read)), read
    monkeypatch.setenv("JETSPARK_STREAM_EPOCH_TARGET_MS", "0")
    assert [e["items"] for e in _epochs_of(spark, body) if e["items"]] == [250_000]
