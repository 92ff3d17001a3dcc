"""``source.items`` parsed in place gives the very frame the general way gives: the same
columns and types, each item on processor ``i % P`` in order; items it cannot carry exactly
go the general way."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jetspark.dag.expressions import quote_identifier
from worker.engine.local_items import local_items
from worker.engine.routing import place

pytestmark = pytest.mark.spark


def _general(spark: SparkSession, items: list[dict[str, Any]], n: int) -> DataFrame:
    rows = [{**item, "__index": i} for i, item in enumerate(items)]
    ordered = list(dict.fromkeys(k for item in items for k in item))
    frame = place(spark.createDataFrame(rows), F.col("__index") % F.lit(n), n)
    return frame.select(*[F.col(quote_identifier(c)) for c in ordered])


def _by_partition(frame: DataFrame) -> list[tuple[int, tuple[Any, ...]]]:
    columns = [F.col(quote_identifier(c)) for c in frame.columns]
    with_pid = frame.select(F.spark_partition_id().alias("__pid"), *columns)
    return [(row[0], tuple(row[1:])) for row in with_pid.collect()]


@pytest.mark.parametrize("processors", [1, 3])
def test_items_parsed_in_place_are_those_the_general_way_places(
    spark: SparkSession, processors: int
) -> None:
    items: list[dict[str, Any]] = [
        {"n": i, "s": f'é{i}\n"q" 😀', "x": i / 3, "b": i % 2 == 0, "z": None} for i in range(7)
    ]
    items[0]["z"] = 2**63 - 1
    items.append({"a.b": "dotted", "n": -(2**63)})  # a key only one item has
    local = local_items(spark, items, processors, list(dict.fromkeys(k for i in items for k in i)))
    assert local is not None
    general = _general(spark, items, processors)
    assert local.schema == general.schema
    assert local.rdd.getNumPartitions() == processors
    assert _by_partition(local) == _by_partition(general)


@pytest.mark.parametrize(
    "items",
    [
        [{"m": {"k": 1}}],  # nested: inferred as a map
        [{"l": [1, 2]}],
        [{"v": 1}, {"v": "one"}],  # mixed types
        [{"v": 1}, {"v": 1.5}],
        [{"v": None}],  # a field no item types
        [{"v": 2**63}],  # past 64 bits
        [{"v": float("nan")}],
        [{}],
    ],
)
def test_items_json_cannot_carry_exactly_go_the_general_way(
    spark: SparkSession, items: list[dict[str, Any]]
) -> None:
    ordered = list(dict.fromkeys(k for item in items for k in item))
    assert local_items(spark, items, 2, ordered) is None
