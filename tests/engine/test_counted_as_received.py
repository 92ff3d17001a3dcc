"""A vertex that emits one item per item received (``Op.preserves_count``) with no exchange
before it is not observed: it emitted what it received. After an exchange it is, so that
Spark cannot push a later filter, with its expressions, below the exchange. An aggregate
that counts its own input counts its groups, what it emits, in the same observation. The
README's word count, with a ``map`` after its ``combine``, is counted exactly by two
observations: its lines (with the words they split into) and its groups."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.conftest import Observed, RunDag, job_body

pytestmark = pytest.mark.spark

LINES = ["a b a", "b c", "", "a"]
"""Seven words (one of them empty: ``split('')`` gives ``['']``), six kept, three keys."""


def word_count(*, combine_edge: dict[str, Any]) -> dict[str, Any]:
    vertices: list[dict[str, Any]] = [
        {"name": "lines", "processor": "source.items",
         "params": {"items": [{"line": line} for line in LINES]}},
        # a sender whose count Spark must observe (a source.items count is known)
        {"name": "kept", "processor": "filter", "params": {"where": "true"}},
        {"name": "words", "processor": "flat_map",
         "params": {"explode": "split(line, ' ')", "as": "word"}},
        {"name": "nonempty", "processor": "filter", "params": {"where": "word != ''"}},
        {"name": "accumulate", "processor": "aggregate",
         "params": {"key": "word", "aggregations": {"n": "count(*)"}, "stage": "accumulate"}},
        {"name": "combine", "processor": "aggregate",
         "params": {"key": "key", "aggregations": {"n": "count(*)"}, "stage": "combine"}},
        {"name": "shout", "processor": "map",
         "params": {"select": {"word": "upper(key)", "n": "n"}}},
        {"name": "out", "processor": "sink.results"},
    ]  # fmt: skip
    edges: list[dict[str, Any]] = [
        {"from": "lines", "to": "kept"},
        {"from": "kept", "to": "words"},
        {"from": "words", "to": "nonempty"},
        {"from": "nonempty", "to": "accumulate", "routing": "partitioned", "key": "word"},
        {"from": "accumulate", "to": "combine", **combine_edge},
        {"from": "combine", "to": "shout"},
        {"from": "shout", "to": "out"},
    ]
    return job_body(vertices, edges, members=1)


def counts(outcome: Any) -> dict[str, tuple[int, int]]:
    return {v: (c.items_in, c.items_out) for v, c in outcome.vertex_counts.items()}


EXACT = {
    "lines": (0, 4), "kept": (4, 4), "words": (4, 7), "nonempty": (7, 6),
    "accumulate": (6, 3), "combine": (3, 3), "shout": (3, 3), "out": (3, 0),
}  # fmt: skip


def test_the_word_count_is_counted_by_its_lines_and_its_groups(
    run_dag: RunDag, observations: list[Observed]
) -> None:
    edge = {"routing": "partitioned", "key": "key", "distributed": True}
    outcome, plan = run_dag(word_count(combine_edge=edge))
    assert next(e for e in plan.edges if e.to == "combine").pregrouped
    seen = [(o.vertex, o.aggregates) for o in observations]
    assert seen == [("kept", ("n",)), ("accumulate", ("n", "groups"))]  # words: its Generate
    assert counts(outcome) == EXACT
    assert sorted((r["word"], r["n"]) for r in outcome.results["out"]) == [
        ("A", 3),
        ("B", 2),
        ("C", 1),
    ]


def test_a_combine_over_partials_that_travel_counts_what_it_receives(
    run_dag: RunDag, observations: list[Observed]
) -> None:
    """Over an all-to-one edge a key's partials may come from several processors: the
    combine merges them, so it counts its own input and its groups; ``shout`` still is not
    observed."""
    outcome, plan = run_dag(word_count(combine_edge={"routing": "all_to_one"}))
    assert not next(e for e in plan.edges if e.to == "combine").pregrouped
    assert "shout" not in {o.vertex for o in observations}
    assert counts(outcome)["shout"] == (3, 3)
    assert counts(outcome)["out"] == (3, 0)
    assert counts(outcome)["nonempty"] == (7, 6)


def test_a_map_after_an_exchange_stays_observed(
    run_dag: RunDag, observations: list[Observed]
) -> None:
    """Its observation keeps ``kept``'s filter, which holds ``doubled``'s expression, from
    being pushed below the repartition into ``numbers``' stage, where Jet does not run it."""
    vertices: list[dict[str, Any]] = [
        {"name": "numbers", "processor": "source.items",
         "params": {"items": [{"n": n} for n in range(10)]}},
        # a count Spark must observe (a source.items count is known, and so its map's)
        {"name": "all", "processor": "filter", "params": {"where": "true"}},
        {"name": "doubled", "processor": "map", "params": {"select": {"d": "n * 2"}}},
        {"name": "kept", "processor": "filter", "params": {"where": "d > 10"}},
        {"name": "out", "processor": "sink.results"},
    ]  # fmt: skip
    edges: list[dict[str, Any]] = [
        {"from": "numbers", "to": "all"},
        {"from": "all", "to": "doubled", "routing": "partitioned", "key": "n",
         "distributed": True},
        {"from": "doubled", "to": "kept"},
        {"from": "kept", "to": "out"},
    ]  # fmt: skip
    outcome, _ = run_dag(job_body(vertices, edges, members=1))
    assert "doubled" in {o.vertex for o in observations}
    assert counts(outcome) == {
        "numbers": (0, 10), "all": (10, 10), "doubled": (10, 10), "kept": (10, 4),
        "out": (4, 0),
    }  # fmt: skip
