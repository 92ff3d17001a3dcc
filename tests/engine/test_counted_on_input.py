"""A ``flat_map`` is counted on its input (the size of each item's array), not on the many
items it emits, and its counts stay exact: empty and null arrays emit nothing, a sender left
to be counted where it is read shares the one observation, and an explode that may give
another size when evaluated again is counted on its output as before."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.conftest import Observed, RunDag, job_body
from worker.engine.runner import VertexFailed

pytestmark = pytest.mark.spark

LINES = ["a b c", "d e", "x", "", "f"]
SPLIT = "if(line = 'x', null, filter(split(line, ' '), w -> w != ''))"
"""Three, two, null (none), empty (none) and one word: six."""


def lines_words(explode: str, *, through_filter: bool) -> dict[str, Any]:
    vertices: list[dict[str, Any]] = [
        {"name": "lines", "processor": "source.items",
         "params": {"items": [{"line": line} for line in LINES]}},
        {"name": "words", "processor": "flat_map", "params": {"explode": explode, "as": "word"}},
        {"name": "out", "processor": "sink.results"},
    ]  # fmt: skip
    edges = [{"from": "lines", "to": "words"}, {"from": "words", "to": "out"}]
    if through_filter:  # a sender whose count Spark must observe, left to where it is read
        vertices.append({"name": "kept", "processor": "filter", "params": {"where": "true"}})
        edges = [{"from": "lines", "to": "kept"}, {"from": "kept", "to": "words"}, edges[1]]
    return job_body(vertices, edges, members=1)


def counts(outcome: Any) -> dict[str, tuple[int, int]]:
    return {v: (c.items_in, c.items_out) for v, c in outcome.vertex_counts.items()}


def test_a_flat_map_is_counted_on_its_input(run_dag: RunDag, observations: list[Observed]) -> None:
    outcome, _ = run_dag(lines_words(SPLIT, through_filter=False))
    assert observations == [Observed("words", ("line",), ("n",))]  # its input's rows, not its words
    assert counts(outcome) == {"lines": (0, 5), "words": (5, 6), "out": (6, 0)}
    assert sorted(r["word"] for r in outcome.results["out"]) == list("abcdef")


def test_a_sender_counted_where_it_is_read_shares_the_observation(
    run_dag: RunDag, observations: list[Observed]
) -> None:
    outcome, _ = run_dag(lines_words(SPLIT, through_filter=True))
    assert observations == [Observed("kept", ("line",), ("n", "emits"))]
    assert counts(outcome) == {
        "lines": (0, 5), "kept": (5, 5), "words": (5, 6), "out": (6, 0)
    }  # fmt: skip


def test_an_explode_that_may_differ_when_run_again_is_counted_on_its_output(
    run_dag: RunDag, observations: list[Observed]
) -> None:
    random_size = "sequence(1, cast(rand() * 4 as int) + 1)"
    outcome, _ = run_dag(lines_words(random_size, through_filter=False))
    assert observations == [Observed("words", ("line", "word"), ("n",))]
    emitted = len(outcome.results["out"])
    assert counts(outcome) == {"lines": (0, 5), "words": (5, emitted), "out": (emitted, 0)}


def test_an_array_too_big_to_make_fails_where_it_is_counted_too(
    run_dag: RunDag, observations: list[Observed]
) -> None:
    """The size observed on the input is the user's checked expression with its guards: an
    explode sized at run time past the limit fails the job clearly, never building it."""
    huge = "array_repeat(line, length(line) * 400000000)"  # 2e9 elements for 'a b c'
    with pytest.raises(VertexFailed, match=r"array_repeat\(\) would make more than"):
        run_dag(lines_words(huge, through_filter=False))
    assert observations == [Observed("words", ("line",), ("n",))]  # counted on its input
