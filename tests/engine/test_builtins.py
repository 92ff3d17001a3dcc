"""Built-in processors on the engine: aggregation in place, joins, priorities, forks, sorts."""

from __future__ import annotations

import random
import tempfile
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from statistics import mean
from typing import Any

import pytest

from jetspark.dag.errors import DagValidationError
from jetspark.dag.model import JobSpec
from jetspark.dag.partitioning import partition_id
from jetspark.dag.validate import validate_job
from tests.engine.conftest import RunDag, job_body
from worker.engine.runner import VertexFailed

MEMBERS = 2
VOCABULARY = ["to", "be", "or", "not", "that", "is", "the", "question", "jet", "spark", "über"]


def lines(count: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    return [
        " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(1, 9))) for _ in range(count)
    ]


def word_count_body(text: list[str], *, lp: int = 2, members: int = MEMBERS) -> dict[str, Any]:
    return job_body(
        [
            {"name": "lines", "processor": "source.items",
             "params": {"items": [{"line": line} for line in text]}},
            {"name": "tokenize", "processor": "flat_map",
             "params": {"explode": "split(line, ' ')", "as": "word"}},
            {"name": "accumulate", "processor": "aggregate", "local_parallelism": lp,
             "params": {"key": "word", "stage": "accumulate",
                        "aggregations": {"count": "count(*)"}}},
            {"name": "placed", "processor": "map", "local_parallelism": lp,
             "params": {"select": {"key": "key", "count": "count",
                                   "at": "spark_partition_id()"}}},
            {"name": "combine", "processor": "aggregate",
             "params": {"key": "key", "stage": "combine",
                        "aggregations": {"count": "count(*)"}}},
            {"name": "at", "processor": "map",
             "params": {"select": {"key": "key", "count": "count", "at": "spark_partition_id()"}}},
            {"name": "partials", "processor": "sink.results", "local_parallelism": lp},
            {"name": "sink", "processor": "sink.results"},
        ],
        [
            {"from": "lines", "to": "tokenize"},
            {"from": "tokenize", "to": "accumulate", "routing": "partitioned", "key": "word"},
            {"from": "accumulate", "to": "placed"},
            {"from": "placed", "to": "combine", "routing": "partitioned", "key": "key",
             "distributed": True},
            {"from": "placed", "to": "partials", "from_ordinal": 1},
            {"from": "combine", "to": "at"},
            {"from": "at", "to": "sink"},
        ],
        members=members,
    )  # fmt: skip


@pytest.mark.parametrize("lp", [1, 3])
def test_two_stage_word_count_aggregates_where_items_were_routed(run_dag: RunDag, lp: int) -> None:
    text = lines(120)
    outcome, _ = run_dag(word_count_body(text, lp=lp))
    expected = Counter(word for line in text for word in line.split(" "))
    final = {row["key"]: row["count"] for row in outcome.results["sink"]}
    assert final == dict(expected)
    assert len(outcome.results["sink"]) == len(expected)  # one row per key after combine
    p_combine = MEMBERS * 2
    for row in outcome.results["sink"]:
        assert row["at"] == partition_id(row["key"]) % p_combine
    # accumulate processor g aggregated what it received and emitted it from partition g (a
    # reshuffle by Spark would move rows elsewhere): the local partitioned edge sends a word
    # to m*lp + pid % lp from each member m.
    partial_sum: Counter[str] = Counter()
    for row in outcome.results["partials"]:
        pid = partition_id(row["key"])
        assert row["at"] in {m * lp + pid % lp for m in range(MEMBERS)}
        partial_sum[row["key"]] += row["count"]
    assert partial_sum == expected
    counts = outcome.vertex_counts
    words = sum(expected.values())
    assert (counts["lines"].items_out, counts["tokenize"].items_out) == (len(text), words)
    assert counts["accumulate"].items_in == words
    assert counts["sink"].items_in == len(expected)
    assert (outcome.items_in, outcome.items_out) == (
        len(text),
        len(expected) + len(outcome.results["partials"]),
    )


@pytest.mark.parametrize(("distributed", "members"), [(True, 2), (False, 2), (False, 1)])
def test_combine_fed_by_accumulate_directly_aggregates_where_items_were_routed(
    run_dag: RunDag, distributed: bool, members: int
) -> None:
    # accumulate's groups go straight to combine: placed first, then aggregated in place; a
    # distributed edge cannot tell where accumulate's rows were, a local one (by member) can.
    text, lp = lines(150, seed=11), 2
    body = word_count_body(text, lp=lp, members=members)
    dag = body["dag"]
    dag["vertices"] = [v for v in dag["vertices"] if v["name"] not in {"placed", "partials"}]
    dag["edges"] = [e for e in dag["edges"] if e["from"] != "placed" and e["to"] != "placed"]
    dag["edges"].append(
        {"from": "accumulate", "to": "combine", "routing": "partitioned", "key": "key",
         "distributed": distributed}
    )  # fmt: skip
    outcome, _ = run_dag(body)
    expected = Counter(word for line in text for word in line.split(" "))
    p = members * 2
    # accumulate's groups: one per (member of the line's processor, word)
    groups = {(i % p // 2, word) for i, line in enumerate(text) for word in line.split(" ")}
    final: Counter[str] = Counter()
    for row in outcome.results["sink"]:
        final[row["key"]] += row["count"]
        pid = partition_id(row["key"])
        # a local edge keeps member m's groups on m: m * lp + pid % lp
        assert row["at"] % 2 == pid % 2 if not distributed else row["at"] == pid % p
    assert final == expected
    if distributed:
        assert len(outcome.results["sink"]) == len(expected)
    else:
        assert {(row["at"] // 2, row["key"]) for row in outcome.results["sink"]} == groups
    counts = outcome.vertex_counts
    words = sum(expected.values())
    assert (counts["tokenize"].items_out, counts["accumulate"].items_in) == (words, words)
    assert counts["accumulate"].items_out == counts["combine"].items_in == len(groups)
    assert counts["combine"].items_out == counts["sink"].items_in == len(outcome.results["sink"])


def test_combine_merges_every_mergeable_partial_and_average(run_dag: RunDag) -> None:
    rng = random.Random(5)
    items: list[dict[str, Any]] = [
        {"g": rng.choice("abc"), "v": rng.randint(-50, 50)} for _ in range(200)
    ]
    aggregations = {"n": "count(*)", "s": "sum(v)", "lo": "min(v)", "hi": "max(v)", "m": "avg(v)"}
    body = job_body(
        [
            {"name": "src", "processor": "source.items", "params": {"items": items}},
            {"name": "acc", "processor": "aggregate",
             "params": {"key": "g", "aggregations": aggregations, "stage": "accumulate"}},
            {"name": "comb", "processor": "aggregate", "local_parallelism": 1,
             "params": {"key": "key", "aggregations": aggregations, "stage": "combine"}},
            {"name": "out", "processor": "sink.results"},
        ],
        [
            {"from": "src", "to": "acc", "routing": "unicast", "distributed": True},
            {"from": "acc", "to": "comb", "routing": "partitioned", "key": "key",
             "distributed": True},
            {"from": "comb", "to": "out"},
        ],
        members=MEMBERS,
    )  # fmt: skip
    outcome, _ = run_dag(body)
    by_group: dict[str, list[int]] = defaultdict(list)
    for item in items:
        by_group[item["g"]].append(item["v"])
    got = {row["key"]: row for row in outcome.results["out"]}
    assert set(got) == set(by_group)
    for group, values in by_group.items():
        row = got[group]
        assert (row["n"], row["s"], row["lo"], row["hi"]) == (
            len(values), sum(values), min(values), max(values),
        )  # fmt: skip
        assert row["m"] == pytest.approx(mean(values))


def join_body(token: str, *, how: str = "inner") -> dict[str, Any]:
    dims = [{"id": i, "name": f"dim{i}", "tag": "build"} for i in range(0, 20, 2)]
    facts = [{"fact": j, "dim_id": j % 13, "tag": "probe"} for j in range(60)]
    key = "concat('{token}|{side}|', cast({field} AS string))"
    partitioner = "python:tests.engine.partitioners:logged"
    return job_body(
        [
            {"name": "dims", "processor": "source.items", "params": {"items": dims}},
            {"name": "facts", "processor": "source.items", "params": {"items": facts}},
            {"name": "join", "processor": "hash_join",
             "params": {"build_key": "id", "probe_key": "dim_id", "how": how}},
            {"name": "out", "processor": "sink.results"},
        ],
        [
            {"from": "dims", "to": "join", "to_ordinal": 0, "priority": 0, "distributed": True,
             "routing": "partitioned", "partitioner": partitioner,
             "key": key.format(token=token, side="build", field="id")},
            {"from": "facts", "to": "join", "to_ordinal": 1, "priority": 1, "distributed": True,
             "routing": "partitioned", "partitioner": partitioner,
             "key": key.format(token=token, side="probe", field="dim_id")},
            {"from": "join", "to": "out"},
        ],
        members=MEMBERS,
    )  # fmt: skip


@pytest.mark.parametrize("how", ["inner", "left"])
def test_hash_join_consumes_its_build_side_first_and_probe_fields_win(
    run_dag: RunDag, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setenv("JETSPARK_DAG_ALLOWED_PYTHON_MODULES", "tests.engine")
    token = uuid.uuid4().hex
    outcome, _ = run_dag(join_body(token, how=how))
    log = Path(tempfile.gettempdir()) / f"jetspark-order-{token}.log"
    notes = [line.split() for line in log.read_text().splitlines()]
    log.unlink()
    build = [int(t) for side, t in notes if side == "build"]
    probe = [int(t) for side, t in notes if side == "probe"]
    assert len(build) == 10 and len(probe) == 60
    assert max(build) < min(probe), "the probe edge was read before the build edge was complete"
    rows = outcome.results["out"]
    matched = [r for r in rows if r["name"] is not None]
    assert all(r["tag"] == "probe" and r["name"] == f"dim{r['dim_id']}" for r in matched)
    assert sorted(r["fact"] for r in matched) == [j for j in range(60) if (j % 13) % 2 == 0]
    expected_rows = 60 if how == "left" else len(matched)
    assert len(rows) == expected_rows
    assert set(rows[0]) == {"fact", "dim_id", "tag", "id", "name"}


def fork_body(*, buffered: bool) -> dict[str, Any]:
    items = [{"k": i % 5, "v": i} for i in range(40)]
    return job_body(
        [
            {"name": "src", "processor": "source.items", "params": {"items": items}},
            {"name": "lookup", "processor": "aggregate", "local_parallelism": 1,
             "params": {"key": "k", "aggregations": {"total": "sum(v)"}}},
            {"name": "events", "processor": "filter", "params": {"where": "v >= 10"}},
            {"name": "join", "processor": "hash_join",
             "params": {"build_key": "key", "probe_key": "k"}},
            {"name": "out", "processor": "sink.results"},
        ],
        [
            {"from": "src", "to": "lookup", "routing": "partitioned", "key": "k",
             "distributed": True},
            {"from": "src", "to": "events", "from_ordinal": 1},
            {"from": "lookup", "to": "join", "routing": "broadcast", "distributed": True,
             "priority": 0},
            {"from": "events", "to": "join", "to_ordinal": 1, "priority": 1,
             "buffered": buffered},
            {"from": "join", "to": "out"},
        ],
        members=MEMBERS,
    )  # fmt: skip


def test_a_fork_that_rejoins_with_priorities_runs_when_the_lower_edge_is_buffered(
    run_dag: RunDag,
) -> None:
    with pytest.raises(DagValidationError, match="buffered"):
        validate_job(JobSpec.model_validate(fork_body(buffered=False)))
    outcome, _ = run_dag(fork_body(buffered=True))
    totals = {k: sum(v for v in range(40) if v % 5 == k) for k in range(5)}
    rows = outcome.results["out"]
    assert sorted(r["v"] for r in rows) == list(range(10, 40))
    assert all(r["total"] == totals[r["k"]] for r in rows)


def test_sort_orders_what_each_processor_received_and_one_processor_orders_all(
    run_dag: RunDag,
) -> None:
    rng = random.Random(9)
    items = [{"v": rng.randint(0, 10_000)} for _ in range(100)]
    body = job_body(
        [
            {"name": "src", "processor": "source.items", "params": {"items": items}},
            {"name": "local", "processor": "sort", "params": {"by": "v"}},
            {"name": "tag", "processor": "map",
             "params": {"select": {"v": "v", "pid": "spark_partition_id()"}}},
            {"name": "all", "processor": "sort", "local_parallelism": 1, "params": {"by": ["v"]}},
            {"name": "sorted_parts", "processor": "sink.results"},
            {"name": "total", "processor": "sink.results", "local_parallelism": 1},
        ],
        [
            {"from": "src", "to": "local", "routing": "unicast", "distributed": True},
            {"from": "local", "to": "tag"},
            {"from": "tag", "to": "sorted_parts"},
            {"from": "src", "to": "all", "from_ordinal": 1, "routing": "all_to_one",
             "distributed": True},
            {"from": "all", "to": "total"},
        ],
        config={},
    )  # fmt: skip
    body["config"] = {"members": 1}
    outcome, _ = run_dag(body)
    parts: dict[Any, list[Any]] = defaultdict(list)
    for row in outcome.results["sorted_parts"]:
        parts[row["pid"]].append(row["v"])
    assert len(parts) == 2 and all(values == sorted(values) for values in parts.values())
    assert [r["v"] for r in outcome.results["total"]] == sorted(i["v"] for i in items)


def test_a_failing_expression_names_the_vertex_its_error_type_and_message(
    run_dag: RunDag,
) -> None:
    body = job_body(
        [
            {"name": "src", "processor": "source.items", "params": {"items": [{"v": "x"}]}},
            {"name": "boom", "processor": "map", "params": {"select": {"n": "size(v)"}}},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "src", "to": "boom"}, {"from": "boom", "to": "out"}],
    )  # fmt: skip
    with pytest.raises(VertexFailed) as failure:
        run_dag(body)
    assert failure.value.vertex == "boom"
    assert "AnalysisException" in str(failure.value) and "size" in str(failure.value)
