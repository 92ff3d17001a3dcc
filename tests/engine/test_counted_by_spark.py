"""A batch ``flat_map`` is counted by Spark's own ``Generate`` (its "number of output rows"),
and a text file's lines by the scan that reads them: no observation, and the counts stay
exact: empty and null arrays emit nothing, an explode that gives another size when
evaluated again is counted as it ran, a flat_map over another's output is told apart from
it, and lines a filter could prune out of the scan (a partition column) are observed."""

from __future__ import annotations

from pathlib import Path
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


def test_a_flat_map_is_counted_by_sparks_generate(
    run_dag: RunDag, observations: list[Observed]
) -> None:
    outcome, _ = run_dag(lines_words(SPLIT, through_filter=False))
    assert observations == []  # its items are never observed, nor its input's sizes
    assert counts(outcome) == {"lines": (0, 5), "words": (5, 6), "out": (6, 0)}
    assert sorted(r["word"] for r in outcome.results["out"]) == list("abcdef")


def test_a_sender_counted_where_it_is_read_is_observed_alone(
    run_dag: RunDag, observations: list[Observed]
) -> None:
    outcome, _ = run_dag(lines_words(SPLIT, through_filter=True))
    assert observations == [Observed("kept", ("line",), ("n",))]  # no second size of each array
    assert counts(outcome) == {
        "lines": (0, 5), "kept": (5, 5), "words": (5, 6), "out": (6, 0)
    }  # fmt: skip


def test_an_explode_that_may_differ_when_run_again_is_counted_as_it_ran(
    run_dag: RunDag, observations: list[Observed]
) -> None:
    random_size = "sequence(1, cast(rand() * 4 as int) + 1)"
    outcome, _ = run_dag(lines_words(random_size, through_filter=False))
    assert observations == []
    emitted = len(outcome.results["out"])
    assert counts(outcome) == {"lines": (0, 5), "words": (5, emitted), "out": (emitted, 0)}


def test_a_flat_map_of_a_flat_maps_items_is_told_apart(run_dag: RunDag) -> None:
    """The second ``Generate`` reads the first's attribute: only the node that makes an
    attribute is counted for it."""
    body = lines_words(SPLIT, through_filter=False)
    body["dag"]["vertices"].append(
        {"name": "letters", "processor": "flat_map",
         "params": {"explode": "array(word, upper(word))", "as": "letter"}}
    )  # fmt: skip
    body["dag"]["edges"] = [
        {"from": "lines", "to": "words"},
        {"from": "words", "to": "letters"},
        {"from": "letters", "to": "out"},
    ]
    outcome, _ = run_dag(body)
    assert counts(outcome) == {
        "lines": (0, 5), "words": (5, 6), "letters": (6, 12), "out": (12, 0)
    }  # fmt: skip


def test_an_array_too_big_to_make_fails_the_job(
    run_dag: RunDag, observations: list[Observed]
) -> None:
    """The user's checked expression keeps its guards: an explode sized at run time past
    the limit fails the job clearly, never building it."""
    huge = "array_repeat(line, length(line) * 400000000)"  # 2e9 elements for 'a b c'
    with pytest.raises(VertexFailed, match=r"array_repeat\(\) would make more than"):
        run_dag(lines_words(huge, through_filter=False))
    assert observations == []


def text_lines(path: Path, where: str) -> dict[str, Any]:
    return job_body(
        [
            {"name": "lines", "processor": "source.files",
             "params": {"path": str(path), "format": "text"}},
            {"name": "kept", "processor": "filter", "params": {"where": where}},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "lines", "to": "kept"}, {"from": "kept", "to": "out"}],
        members=1,
    )  # fmt: skip


def test_text_lines_are_counted_by_the_scan(
    run_dag: RunDag, observations: list[Observed], tmp_path: Path
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "a.txt").write_text("one\ntwo\nthree\n")
    (folder / "b.txt").write_text("four\n")
    outcome, _ = run_dag(text_lines(folder, "line != 'two'"))
    assert [o.vertex for o in observations] == ["kept"]  # the filter's, not the lines'
    assert counts(outcome) == {"lines": (0, 4), "kept": (4, 3), "out": (3, 0)}


def test_text_lines_with_a_partition_column_are_observed_whatever_a_filter_prunes(
    run_dag: RunDag, observations: list[Observed], tmp_path: Path
) -> None:
    """A filter on ``epoch`` prunes the other directory out of Spark's scan: the source
    still emits its lines, as Jet's would, so they are observed, not taken from the scan."""
    folder = tmp_path / "parted"
    for epoch, text in ((1, "one\ntwo\n"), (2, "three\n")):
        (folder / f"epoch={epoch}").mkdir(parents=True)
        (folder / f"epoch={epoch}" / "part.txt").write_text(text)
    outcome, _ = run_dag(text_lines(folder, "epoch = 1"))
    assert [o.vertex for o in observations] == ["lines", "kept"]
    assert counts(outcome) == {"lines": (0, 3), "kept": (3, 2), "out": (2, 0)}
