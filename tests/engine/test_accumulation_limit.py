"""``max_processor_accumulated_records``: a processor gathering more records than the job
allows (an aggregate's or a window's groups, a join's build items, a sort's items) fails the
job naming the vertex; at the limit it runs as without one."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.conftest import RunDag, job_body
from tests.engine.test_epochs import windowed_body
from tests.engine.test_stream_join import BUILD, PER_EPOCH, join_stream, joined_rows, reference
from worker.engine.runner import VertexFailed

pytestmark = pytest.mark.spark

ITEMS = [{"k": i % 12, "v": i} for i in range(48)]


def _one_step(vertex: dict[str, Any], edge: dict[str, Any], limit: int) -> dict[str, Any]:
    """items (P 2) -> vertex (P 2) -> results, each processor of ``vertex`` holding 6 of 12."""
    return job_body(
        [
            {"name": "src", "processor": "source.items", "params": {"items": ITEMS}},
            {"name": "acc", **vertex},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "src", "to": "acc", **edge}, {"from": "acc", "to": "out"}],
        local_parallelism=2,
        max_processor_accumulated_records=limit,
    )


AGGREGATE = {"processor": "aggregate",
             "params": {"key": "k", "aggregations": {"n": "count(*)"}}}  # fmt: skip
BY_KEY = {"routing": "partitioned", "key": "k"}
SORT = {"processor": "sort", "params": {"by": "v"}}
CASES = {
    "aggregate on its key": (AGGREGATE, BY_KEY, "groups"),
    "aggregate over unicast": (AGGREGATE, {}, "groups"),
    "sort": (SORT, {}, "items to sort"),
}


@pytest.mark.parametrize("case", CASES.keys())
def test_a_processor_over_the_limit_fails_the_job(run_dag: RunDag, case: str) -> None:
    vertex, edge, what = CASES[case]
    holds = 24 if vertex is SORT else 12  # the most a processor can hold here
    with pytest.raises(VertexFailed, match=rf"'acc': a processor holds more than 5 {what}"):
        run_dag(_one_step(vertex, edge, 5))
    outcome, _ = run_dag(_one_step(vertex, edge, holds))
    assert len(outcome.results["out"]) == (48 if vertex is SORT else 12)


def test_a_hash_joins_build_side_over_the_limit_fails_the_job(run_dag: RunDag) -> None:
    def body(limit: int) -> dict[str, Any]:
        return job_body(
            [
                {"name": "dims", "processor": "source.items", "params": {"items": ITEMS}},
                {"name": "facts", "processor": "source.items",
                 "params": {"items": [{"k": 3, "f": 1}]}},
                {"name": "join", "processor": "hash_join",
                 "params": {"build_key": "k", "probe_key": "k"}},
                {"name": "out", "processor": "sink.results"},
            ],
            [
                {"from": "dims", "to": "join", "routing": "partitioned", "key": "k",
                 "priority": 0},
                {"from": "facts", "to": "join", "to_ordinal": 1, "routing": "partitioned",
                 "key": "k", "priority": 1},
                {"from": "join", "to": "out"},
            ],
            local_parallelism=2,
            max_processor_accumulated_records=limit,
        )  # fmt: skip

    with pytest.raises(VertexFailed, match=r"'join': a processor holds more than 4 build"):
        run_dag(body(4))
    outcome, _ = run_dag(body(48))
    assert sorted(r["v"] for r in outcome.results["out"]) == [3, 15, 27, 39]


def test_a_windows_state_over_the_limit_fails_the_stream(run_dag: RunDag) -> None:
    body = windowed_body({"type": "tumbling", "size_ms": 1000}, count=800)
    body["config"]["max_processor_accumulated_records"] = 3  # 5 keys over 2 processors
    with pytest.raises(VertexFailed, match=r"'win': a processor holds more than 3 groups"):
        run_dag(body)
    body["config"]["max_processor_accumulated_records"] = 10_000
    outcome, _ = run_dag(body)
    assert sum(r["n"] for r in outcome.results["out"]) == 800


def test_a_streaming_joins_carried_build_side_counts_toward_the_limit(
    run_dag: RunDag, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each epoch brings about 50 build items per processor, and each processor holds about
    100 after the second: a limit of 80 fails only when carried items count too."""
    monkeypatch.setenv("JETSPARK_STREAM_EPOCH_INTERVAL_MS", "1")
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", str(PER_EPOCH))
    body = join_stream(how="inner", streaming=True)
    body["config"]["max_processor_accumulated_records"] = 80
    with pytest.raises(VertexFailed, match=r"'join': a processor holds more than 80 build"):
        run_dag(body)
    body["config"]["max_processor_accumulated_records"] = BUILD
    outcome, _ = run_dag(body)
    assert joined_rows(outcome.results["out"]) == reference("inner")
