"""The epoch engine on the shared SparkSession: bounded rate-limited streams end by themselves."""

from __future__ import annotations

import pytest

from tests.engine.conftest import RunDag, job_body

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
