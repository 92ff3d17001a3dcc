"""Edge parameters do what SPEC §3 says or are refused (issue 13, no stubs): ``buffered`` keeps
a fork's items, ``outbox_capacity`` bounds the batches of senders that batch in Python,
``queue_size`` a python vertex's inbox; Jet settings Spark has no match for are refused."""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest

from jetspark.dag.errors import DagValidationError
from jetspark.dag.model import EdgeConfig, JobSpec
from jetspark.dag.validate import validate_job
from tests.engine.conftest import RunDag, job_body
from worker.engine.ops.base import OpContext
from worker.engine.ops.event_time import WindowOp
from worker.engine.sequence import sequence_batches

ITEMS = [{"k": f"w{i}", "v": i} for i in range(30)]


def _pipeline(edge: dict[str, Any]) -> dict[str, Any]:
    return job_body(
        [
            {"name": "src", "processor": "source.items", "params": {"items": ITEMS}},
            {"name": "mid", "processor": "map", "params": {"select": {"v": "v"}}},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "src", "to": "mid"}, {"from": "mid", "to": "out", **edge}],
    )


def _problems(body: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(DagValidationError) as refused:
        validate_job(JobSpec.model_validate(body))
    return [(p.pointer, p.message) for p in refused.value.problems]


@pytest.mark.parametrize(
    ("field", "value"), [("packet_size_limit", 1024), ("receive_window_multiplier", 5)]
)
def test_jet_network_settings_spark_cannot_honour_are_refused_by_name(
    field: str, value: int
) -> None:
    problems = _problems(_pipeline({"config": {field: value}}))
    assert problems == [(f"/dag/edges/1/config/{field}", problems[0][1])]
    assert field in problems[0][1] and "Spark" in problems[0][1]
    default = getattr(EdgeConfig(), field)
    validate_job(JobSpec.model_validate(_pipeline({"config": {field: default}})))


def test_outbox_and_queue_sizes_are_refused_where_nothing_batches() -> None:
    problems = _problems(_pipeline({"config": {"outbox_capacity": 8, "queue_size": 4}}))
    assert [p for p, _ in problems] == [
        "/dag/edges/1/config/outbox_capacity",
        "/dag/edges/1/config/queue_size",
    ]
    sequence = _pipeline({})
    sequence["dag"]["vertices"][0] = {
        "name": "src",
        "processor": "source.sequence",
        "params": {"count": 10},
    }
    sequence["dag"]["edges"][0]["config"] = {"outbox_capacity": 8}
    validate_job(JobSpec.model_validate(sequence))  # a sender that batches in Python


def test_a_sequence_hands_over_batches_of_at_most_its_outbox_capacity() -> None:
    sizes = [b.num_rows for b in sequence_batches(0, 100, 1, 7)]
    assert sizes == [7] * 14 + [2]
    strided = [b.column(0).to_pylist() for b in sequence_batches(3, 40, 4, 3)]
    assert strided == [[3, 7, 11], [15, 19, 23], [27, 31, 35], [39]]


def _fork(buffered: bool, token: str) -> dict[str, Any]:
    key = f"concat('{token}|fork|', k)"
    return job_body(
        [
            {"name": "src", "processor": "source.items", "params": {"items": ITEMS}},
            {"name": "fork", "processor": "map", "params": {"select": {"k": "k", "v": "v"}}},
            {"name": "a", "processor": "sink.results"},
            {"name": "b", "processor": "sink.results"},
        ],
        [
            {"from": "src", "to": "fork", "routing": "partitioned", "key": key,
             "partitioner": "python:tests.engine.partitioners:logged"},
            {"from": "fork", "to": "a"},
            {"from": "fork", "to": "b", "from_ordinal": 1, "buffered": buffered},
        ],
    )  # fmt: skip


@pytest.mark.spark
@pytest.mark.parametrize("buffered", [True, False])
def test_a_buffered_edge_keeps_its_forks_items_instead_of_recomputing_them(
    run_dag: RunDag, monkeypatch: pytest.MonkeyPatch, buffered: bool
) -> None:
    monkeypatch.setenv("JETSPARK_DAG_ALLOWED_PYTHON_MODULES", "tests.engine")
    token = uuid.uuid4().hex
    log = Path(tempfile.gettempdir()) / f"jetspark-order-{token}.log"
    try:
        outcome, _ = run_dag(_fork(buffered, token))
        routed = log.read_text().splitlines()
    finally:
        if log.exists():
            os.unlink(log)
    for sink in ("a", "b"):
        assert sorted(r["v"] for r in outcome.results[sink]) == list(range(30))
        assert outcome.vertex_counts[sink].items_in == 30
    assert outcome.vertex_counts["fork"].items_out == 30
    # Kept: the fork's input was routed once. Not kept: once per edge that read it.
    assert len(routed) == (30 if buffered else 60)


def _timestamped(timestamp_field: str | None) -> dict[str, Any]:
    items = [{"k": i % 3, "ts": 1000 + 10 * i} for i in range(9)]
    params: dict[str, Any] = {"items": items}
    if timestamp_field is not None:
        params["timestamp_field"] = timestamp_field
    return job_body(
        [
            {"name": "src", "processor": "source.items", "params": params},
            {"name": "win", "processor": "window",
             "params": {"timestamp": "ts", "type": "tumbling", "size_ms": 50,
                        "aggregations": {"n": "count(*)"}}},
            {"name": "out", "processor": "sink.results", "local_parallelism": 1},
        ],
        [{"from": "src", "to": "win"}, {"from": "win", "to": "out"}],
        members=1,
        local_parallelism=3,
    )  # fmt: skip


def test_a_timestamp_field_must_hold_integers_in_every_item() -> None:
    body = _timestamped("ts")
    body["dag"]["vertices"][0]["params"]["items"].append({"k": 1, "ts": "late"})
    problems = _problems(body)
    assert problems[0][0] == "/dag/vertices/0/params"
    assert "timestamp_field 'ts': item 9" in problems[0][1]
    assert _problems(_timestamped("k_missing"))[0][0] == "/dag/vertices/0/params"


@pytest.mark.spark
@pytest.mark.parametrize("timestamped", [True, False])
def test_items_with_a_timestamp_field_emit_their_watermarks(
    run_dag: RunDag, monkeypatch: pytest.MonkeyPatch, timestamped: bool
) -> None:
    seen: list[dict[int, int | None]] = []
    original = WindowOp.apply

    def apply(self: WindowOp, ctx: OpContext) -> Any:
        output = original(self, ctx)  # a window coalesces its watermarks inside its op
        if ctx.epoch is not None:  # what it heard (not the final epoch's "close all")
            seen.append(ctx.epoch.watermarks.coalesced(ctx.vertex.name))
        return output

    monkeypatch.setattr(WindowOp, "apply", apply)
    outcome, _ = run_dag(_timestamped("ts" if timestamped else None))
    assert sum(r["n"] for r in outcome.results["out"]) == 9
    # Processor g of the source holds items g, g+3, g+6: its watermark is item g+6's ts, and
    # the window's processor g (a fused edge) hears exactly that one.
    expected = {0: 1060, 1: 1070, 2: 1080} if timestamped else {0: None, 1: None, 2: None}
    assert seen[0] == expected
