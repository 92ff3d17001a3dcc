"""SPEC §4 item by item: every routing policy, local and distributed, several parallelisms.

Each item records ``spark_partition_id()`` in the receiving vertex, so the test sees which
processor got it, and recomputes the formula with mmh3 (``jetspark.dag.partitioning``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import pytest

from jetspark.dag.partitioning import partition_id, partitioned_target
from tests.engine.conftest import RunDag, job_body

MEMBERS = 2
WORDS = ["a", "bb", "ccc", "dddd", "héllo", "日本語", "🙂x", "", "word-count", "jet"]
ITEMS: list[dict[str, Any]] = [
    {"i": i, "k": WORDS[i % len(WORDS)] + str(i // 7), "n": i * 7919} for i in range(90)
]


def receivers(
    run_dag: RunDag, edge: dict[str, Any], lp_u: int, lp_v: int
) -> tuple[dict[int, list[int]], Any]:
    """Route ITEMS from a source of lp_u over ``edge`` into a vertex of lp_v."""
    body = job_body(
        [
            {"name": "src", "processor": "source.items", "local_parallelism": lp_u,
             "params": {"items": ITEMS}},
            {"name": "probe", "processor": "map", "local_parallelism": lp_v,
             "params": {"select": {"i": "i", "pid": "spark_partition_id()"}}},
            {"name": "out", "processor": "sink.results", "local_parallelism": lp_v},
        ],
        [{"from": "src", "to": "probe", **edge}, {"from": "probe", "to": "out"}],
        members=MEMBERS,
    )  # fmt: skip
    outcome, plan = run_dag(body)
    got: dict[int, list[int]] = defaultdict(list)
    for row in outcome.results["out"]:
        got[row["i"]].append(row["pid"])
    return got, plan


def sender_member(i: int, lp_u: int) -> int:
    """Item i is emitted by source processor i % P_u, on member (i % P_u) // lp_u."""
    return (i % (MEMBERS * lp_u)) // lp_u


def candidates(member: int, lp_v: int, *, distributed: bool) -> list[int]:
    return (
        list(range(MEMBERS * lp_v))
        if distributed
        else list(range(member * lp_v, (member + 1) * lp_v))
    )


PARALLELISMS = [(1, 1), (2, 3), (3, 2)]


@pytest.mark.parametrize("distributed", [False, True])
@pytest.mark.parametrize(("lp_u", "lp_v"), PARALLELISMS)
@pytest.mark.parametrize("key", ["k", "n"])
def test_partitioned_murmur3_routes_each_item_to_its_formula_processor(
    run_dag: RunDag, distributed: bool, lp_u: int, lp_v: int, key: str
) -> None:
    edge = {"routing": "partitioned", "key": key, "distributed": distributed}
    got, _ = receivers(run_dag, edge, lp_u, lp_v)
    for item in ITEMS:
        expected = partitioned_target(
            partition_id(item[key], 271),
            distributed=distributed,
            member=sender_member(item["i"], lp_u),
            parallelism=MEMBERS * lp_v,
            local_parallelism=lp_v,
        )
        assert got[item["i"]] == [expected], item


@pytest.mark.parametrize("distributed", [False, True])
def test_spark_hash_partitioner_equals_murmur3_on_integers(
    run_dag: RunDag, distributed: bool
) -> None:
    edge = {"routing": "partitioned", "key": "n", "partitioner": "spark_hash",
            "distributed": distributed}  # fmt: skip
    got, _ = receivers(run_dag, edge, 2, 3)
    for item in ITEMS:
        expected = partitioned_target(
            partition_id(item["n"], 271),
            distributed=distributed,
            member=sender_member(item["i"], 2),
            parallelism=MEMBERS * 3,
            local_parallelism=3,
        )
        assert got[item["i"]] == [expected]


@pytest.mark.parametrize("distributed", [False, True])
def test_python_partitioner_routes_by_the_pid_it_returns(
    run_dag: RunDag, distributed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JETSPARK_DAG_ALLOWED_PYTHON_MODULES", "tests.engine")
    edge = {"routing": "partitioned", "key": "k", "distributed": distributed,
            "partitioner": "python:tests.engine.partitioners:by_length"}  # fmt: skip
    got, _ = receivers(run_dag, edge, 2, 3)
    for item in ITEMS:
        expected = partitioned_target(
            len(str(item["k"])),
            distributed=distributed,
            member=sender_member(item["i"], 2),
            parallelism=MEMBERS * 3,
            local_parallelism=3,
        )
        assert got[item["i"]] == [expected]


@pytest.mark.parametrize("distributed", [False, True])
@pytest.mark.parametrize(("lp_u", "lp_v"), PARALLELISMS)
def test_all_to_one_sends_everything_to_the_planned_pid(
    run_dag: RunDag, distributed: bool, lp_u: int, lp_v: int
) -> None:
    edge = {"routing": "all_to_one", "distributed": distributed}
    got, plan = receivers(run_dag, edge, lp_u, lp_v)
    (pid,) = [e.all_to_one_pid for e in plan.edges if e.source == "src"]
    assert pid is not None
    for item in ITEMS:
        member = sender_member(item["i"], lp_u)
        expected = partitioned_target(
            pid, distributed=distributed, member=member,
            parallelism=MEMBERS * lp_v, local_parallelism=lp_v,
        )  # fmt: skip
        assert got[item["i"]] == [expected]
    if distributed:
        assert len({pids[0] for pids in got.values()}) == 1


@pytest.mark.parametrize("distributed", [False, True])
@pytest.mark.parametrize(("lp_u", "lp_v"), PARALLELISMS)
def test_broadcast_reaches_every_candidate_once(
    run_dag: RunDag, distributed: bool, lp_u: int, lp_v: int
) -> None:
    got, _ = receivers(run_dag, {"routing": "broadcast", "distributed": distributed}, lp_u, lp_v)
    for item in ITEMS:
        member = sender_member(item["i"], lp_u)
        assert sorted(got[item["i"]]) == candidates(member, lp_v, distributed=distributed)


@pytest.mark.parametrize("distributed", [False, True])
@pytest.mark.parametrize(("lp_u", "lp_v"), PARALLELISMS)
def test_unicast_sprays_one_candidate_per_item_evenly_per_sender(
    run_dag: RunDag, distributed: bool, lp_u: int, lp_v: int
) -> None:
    got, _ = receivers(run_dag, {"routing": "unicast", "distributed": distributed}, lp_u, lp_v)
    per_sender: dict[int, Counter[int]] = defaultdict(Counter)
    for item in ITEMS:
        (pid,) = got[item["i"]]
        member = sender_member(item["i"], lp_u)
        allowed = candidates(member, lp_v, distributed=distributed)
        assert pid in allowed
        per_sender[item["i"] % (MEMBERS * lp_u)][pid] += 1
    for sender, counts in per_sender.items():
        allowed = candidates(sender // lp_u, lp_v, distributed=distributed)
        spread = [counts[c] for c in allowed]
        assert max(spread) - min(spread) <= 1, (sender, spread)


@pytest.mark.parametrize("lp", [1, 3])
def test_source_items_puts_item_i_on_processor_i_mod_p_and_fused_edges_keep_it(
    run_dag: RunDag, lp: int
) -> None:
    body = job_body(
        [
            {"name": "src", "processor": "source.items", "local_parallelism": lp,
             "params": {"items": ITEMS}},
            {"name": "probe", "processor": "map", "local_parallelism": lp,
             "params": {"select": {"i": "i", "pid": "spark_partition_id()"}}},
            {"name": "out", "processor": "sink.results", "local_parallelism": lp},
        ],
        [{"from": "src", "to": "probe"}, {"from": "probe", "to": "out"}],
        members=MEMBERS,
    )  # fmt: skip
    outcome, plan = run_dag(body)
    assert [e.exchange.value for e in plan.edges] == ["fused", "fused"]
    assert {r["i"]: r["pid"] for r in outcome.results["out"]} == {
        item["i"]: item["i"] % (MEMBERS * lp) for item in ITEMS
    }
