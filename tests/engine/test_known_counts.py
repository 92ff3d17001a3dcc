"""Counts the driver knows before Spark runs (``source.items``, then ``map``/``sort``) are
not observed, yet every count stays exact, and a ``sink.results`` collects them whole only
when they fit its cap."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import SparkSession

from tests.engine.conftest import Observed, RunDag, job_body
from worker.engine.counting import VertexCounters

pytestmark = pytest.mark.spark


def items_map_sink(count: int, *, filtered: bool = False, lp: int = 2) -> dict[str, Any]:
    middle = (
        {"name": "double", "processor": "filter", "params": {"where": "n % 2 = 0"}}
        if filtered
        else {"name": "double", "processor": "map", "params": {"select": {"n": "n * 2"}}}
    )
    return job_body(
        [
            {"name": "items", "processor": "source.items",
             "params": {"items": [{"n": i} for i in range(count)]}},
            {**middle, "local_parallelism": lp},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "items", "to": "double"}, {"from": "double", "to": "out"}],
        members=1,
    )  # fmt: skip


def test_items_into_a_map_are_counted_on_the_driver_and_exactly(
    run_dag: RunDag, observations: list[Observed]
) -> None:
    outcome, _ = run_dag(items_map_sink(25))
    assert observations == []  # nothing for Spark to count
    counts = outcome.vertex_counts
    assert (counts["items"].items_out, counts["double"].items_in) == (25, 25)
    assert (counts["double"].items_out, counts["out"].items_in) == (25, 25)
    assert sorted(r["n"] for r in outcome.results["out"]) == [2 * i for i in range(25)]


def test_a_filter_after_known_items_is_observed_and_counted(
    run_dag: RunDag, observations: list[Observed]
) -> None:
    outcome, _ = run_dag(items_map_sink(25, filtered=True))
    # what a filter lets through is Spark's to count
    assert [o.vertex for o in observations] == ["double"]
    counts = outcome.vertex_counts
    assert (counts["items"].items_out, counts["double"].items_in) == (25, 25)
    assert (counts["double"].items_out, counts["out"].items_in) == (13, 13)


@pytest.mark.parametrize("cap", [5, 25, 2000])
def test_known_counts_keep_the_results_cap_per_processor(run_dag: RunDag, cap: int) -> None:
    outcome, _ = run_dag(items_map_sink(25, lp=2), results_cap=cap)
    assert outcome.vertex_counts["out"].items_in == 25
    records = [r["n"] for r in outcome.results["out"]]
    assert len(records) == min(cap, 25)
    # Processor order, each processor's first items: item i went to processor i % 2.
    ordered = [2 * i for i in range(0, 25, 2)] + [2 * i for i in range(1, 25, 2)]
    assert records == ordered[: len(records)]


def test_known_counts_are_reported_only_once_the_job_ran(spark: SparkSession) -> None:
    live = VertexCounters()
    live.emitted("items", spark.range(10), known=10)
    assert live.counts()["items"].items_out == 0  # not yet run: nothing emitted
    live.settle()
    assert live.counts()["items"].items_out == 10
