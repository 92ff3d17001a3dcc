"""Python processors in epoch runs: state across epochs through snapshots, watermarks."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.engine.conftest import RunDag, job_body
from worker.engine.ops.base import Op, OpContext
from worker.engine.ops.table import OP_TYPES
from worker.engine.runner import VertexFailed
from worker.engine.streaming.scope import FINAL_WATERMARK

pytestmark = pytest.mark.spark

COUNT = 600
KEYS = 7


def _many_epochs(monkeypatch: pytest.MonkeyPatch, per_epoch: int = 150) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_EPOCH_INTERVAL_MS", "1")
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", str(per_epoch))


def _count_epochs(monkeypatch: pytest.MonkeyPatch, vertex: str) -> list[dict[int, int | None]]:
    """Record, per epoch in which ``vertex`` runs, the watermarks it coalesced."""
    op = OP_TYPES[vertex]  # each job has its own instances: patch the kind's class
    seen: list[dict[int, int | None]] = []
    original = op.apply

    def apply(self: Op, ctx: OpContext) -> Any:
        output = original(self, ctx)  # a window coalesces inside its op
        if ctx.epoch is not None:
            seen.append(dict(ctx.epoch.wm_after.get(ctx.vertex.name, {})))
        return output

    monkeypatch.setattr(op, "apply", apply)
    return seen


def running_count_body(*, rate: int | None) -> dict[str, Any]:
    source: dict[str, Any] = {"count": COUNT}
    if rate is not None:
        source["rate_per_s"] = rate
    return job_body(
        [
            {"name": "src", "processor": "source.sequence", "params": source},
            {
                "name": "keyed",
                "processor": "map",
                "params": {"select": {"seq": "seq", "k": f"seq % {KEYS}"}},
            },
            {
                "name": "counts",
                "processor": "python",
                "params": {
                    "class": "jetspark.example_processors.streaming:RunningCount",
                    "args": {"key": "k"},
                },
            },
            {"name": "out", "processor": "sink.results", "local_parallelism": 1},
        ],
        [
            {"from": "src", "to": "keyed"},
            {"from": "keyed", "to": "counts", "routing": "partitioned", "key": "k"},
            {"from": "counts", "to": "out"},
        ],
        members=1,
        local_parallelism=2,
    )


def test_a_stateful_python_processor_over_many_epochs_equals_a_one_shot_run(
    run_dag: RunDag, monkeypatch: pytest.MonkeyPatch
) -> None:
    once, _ = run_dag(running_count_body(rate=None))  # bounded, no rate: a batch run
    _many_epochs(monkeypatch)
    epochs = _count_epochs(monkeypatch, "python")
    streamed, _ = run_dag(running_count_body(rate=10_000_000))
    assert len(epochs) >= 4, "the stream should take several epochs"

    def pairs(rows: list[dict[str, Any]]) -> Counter[tuple[str, int]]:
        return Counter((r["key"], r["count"]) for r in rows)

    expected = Counter(
        (str(k), i) for k in range(KEYS) for i in range(1, len(range(k, COUNT, KEYS)) + 1)
    )
    assert pairs(once.results["out"]) == expected
    assert pairs(streamed.results["out"]) == expected  # counts carried across every epoch


def test_a_python_processor_emitting_a_watermark_not_above_its_last_fails_the_job(
    run_dag: RunDag, monkeypatch: pytest.MonkeyPatch
) -> None:
    _many_epochs(monkeypatch)
    body = job_body(
        [
            {
                "name": "src",
                "processor": "source.sequence",
                "params": {"count": 400, "rate_per_s": 10_000_000},
            },
            {
                "name": "stuck",
                "processor": "python",
                "params": {
                    "class": "jetspark.example_processors.streaming:FixedWatermark",
                    "args": {"watermark": 1000},
                },
            },
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "src", "to": "stuck"}, {"from": "stuck", "to": "out"}],
        members=1,
        local_parallelism=1,
    )
    with pytest.raises(VertexFailed) as failed:
        run_dag(body)
    assert failed.value.vertex == "stuck"
    assert "WatermarkNotIncreasing" in str(failed.value)
    assert "'stuck'" in str(failed.value)


def test_a_python_processor_forwards_increasing_watermarks_so_windows_close(
    run_dag: RunDag, monkeypatch: pytest.MonkeyPatch
) -> None:
    _many_epochs(monkeypatch, per_epoch=300)
    window_marks = _count_epochs(monkeypatch, "window")
    count = 1200
    body = job_body(
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
                "name": "checked",
                "processor": "python",
                "params": {
                    "class": "jetspark.example_processors.streaming:PassThrough",
                    "args": {"schema": "seq bigint, ts bigint, k bigint"},
                },
            },
            {
                "name": "win",
                "processor": "window",
                "params": {
                    "timestamp": "ts",
                    "key": "k",
                    "type": "tumbling",
                    "size_ms": 1000,
                    "aggregations": {"n": "count(*)", "total": "sum(seq)"},
                },
            },
            {"name": "out", "processor": "sink.results", "local_parallelism": 1},
        ],
        [
            {"from": "src", "to": "events"},
            {"from": "events", "to": "wm"},
            {"from": "wm", "to": "checked"},
            {"from": "checked", "to": "win", "routing": "partitioned", "key": "k"},
            {"from": "win", "to": "out"},
        ],
        members=1,
        local_parallelism=2,
    )
    outcome, _ = run_dag(body)
    # Before the stream's final watermark the window already heard increasing watermarks:
    # only what the Python processors forwarded reaches it.
    before_end = [marks for marks in window_marks if FINAL_WATERMARK not in marks.values()]
    heard = [
        min(v for v in m.values() if v is not None) for m in before_end if None not in m.values()
    ]
    assert len(heard) >= 2 and heard == sorted(heard) and heard[0] < heard[-1]
    got = {(r["window_start"], r["key"]): (r["n"], r["total"]) for r in outcome.results["out"]}
    assert len(got) == len(outcome.results["out"]), "a window was emitted twice"
    expected: dict[tuple[int, int], list[int]] = {}
    for seq in range(count):
        expected.setdefault((seq * 7 // 1000 * 1000, seq % 5), []).append(seq)
    assert got == {w: (len(s), sum(s)) for w, s in expected.items()}


def test_python_state_follows_its_keys_when_the_parallelism_changes(
    run_dag: RunDag, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counts of the first 300 items on 2 processors restored into 3 for the next 300."""
    from worker.engine import epoch_loop as loop

    _many_epochs(monkeypatch)
    saved: dict[str, Any] = {}
    barrier, start = loop._Stream.barrier, loop._Stream.start

    def keep_final_state(self: Any, scope: Any, *args: Any) -> None:
        barrier(self, scope, *args)
        if scope.final and not saved:
            saved.update({n: (f.schema, f.collect()) for n, f in self.state.items()})

    def start_from_saved(self: Any) -> Any:
        begun = start(self)
        if saved:
            schema, rows = saved["counts"]
            frame = self.spark.createDataFrame(rows, schema)
            layout = {"parallelism": 2, "local_parallelism": 2}
            self.state = {"counts": self.reslot("counts", frame, layout)}
        return begun

    monkeypatch.setattr(loop._Stream, "barrier", keep_final_state)
    monkeypatch.setattr(loop._Stream, "start", start_from_saved)
    first_body = running_count_body(rate=10_000_000)
    first_body["dag"]["vertices"][0]["params"]["count"] = COUNT // 2
    first, _ = run_dag(first_body)
    assert {int(r["__processor"]) for r in saved["counts"][1]} == {0, 1}
    second_body = running_count_body(rate=10_000_000)
    second_body["dag"]["vertices"][0]["params"].update(count=COUNT // 2, start=COUNT // 2)
    second_body["config"]["local_parallelism"] = 3
    second, _ = run_dag(second_body)

    got = Counter((r["key"], r["count"]) for r in first.results["out"] + second.results["out"])
    expected = Counter(
        (str(k), i) for k in range(KEYS) for i in range(1, len(range(k, COUNT, KEYS)) + 1)
    )
    assert got == expected  # no key restarted its count on a processor that lacked its state


def instance_count_body(count: int, *, local_parallelism: int = 2) -> dict[str, Any]:
    return job_body(
        [
            {
                "name": "src",
                "processor": "source.sequence",
                "params": {"count": count, "rate_per_s": 10_000_000},
            },
            {
                "name": "counted",
                "processor": "python",
                "params": {"class": "jetspark.example_processors.streaming:InstanceCount"},
            },
            {"name": "out", "processor": "sink.results", "local_parallelism": 1},
        ],
        [{"from": "src", "to": "counted"}, {"from": "counted", "to": "out"}],
        members=1,
        local_parallelism=local_parallelism,
    )


@pytest.mark.parametrize("parallelism", [1, 2])
def test_python_processor_instances_live_across_epochs(
    run_dag: RunDag, monkeypatch: pytest.MonkeyPatch, parallelism: int
) -> None:
    """Over 20 epochs a processor is created far fewer times than it runs: an epoch run in
    the Python worker that kept its instance takes it back (no ``init``, no restore).
    Fresh instances every epoch would make ``created == epochs``.

    With one processor one Python worker runs every epoch: one instance. With two on two
    cores, Spark hands its idle Python workers out in turn, so an epoch's task often runs
    in the worker that kept the other processor's instance and restores (a third to two
    thirds of the epochs here): only "fewer instances than epochs" holds for sure."""
    _many_epochs(monkeypatch, per_epoch=50)
    outcome, _ = run_dag(instance_count_body(1000, local_parallelism=parallelism))
    rows = outcome.results["out"]
    assert sorted(r["seq"] for r in rows) == list(range(1000))
    epochs, created = 0, 0
    for g in range(parallelism):
        mine = [r for r in rows if r["processor"] == g]
        epochs += max(r["epochs"] for r in mine)
        created += max(r["created"] for r in mine)
    assert epochs >= 15 * parallelism, f"only {epochs} processor epochs"
    most = 2 if parallelism == 1 else epochs - 2
    assert created <= most, f"{created} instances in {epochs} processor epochs"
