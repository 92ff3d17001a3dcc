"""Bounded sources and the sinks: sequence, files in every format, Redis map, logger."""

from __future__ import annotations

import json
import uuid
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
import redis
from pyspark.sql import Row, SparkSession
from pyspark.sql.types import (
    ArrayType,
    DecimalType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from jetspark.queue.keys import Keys
from tests.engine.conftest import RunDag, job_body
from worker.engine.ops.sinks import collect_records, json_native, json_safe


@pytest.mark.parametrize("file_format", ["json", "csv", "parquet", "text"])
def test_files_written_by_sink_files_read_back_by_source_files(
    run_dag: RunDag, tmp_path: Path, file_format: str
) -> None:
    path = str(tmp_path / f"out.{file_format}")
    write_body = (
        job_body(
            [
                {
                    "name": "seq",
                    "processor": "source.sequence",
                    "params": {"count": 50, "start": 5},
                },
                {
                    "name": "files",
                    "processor": "sink.files",
                    "params": {"path": path, "format": file_format},
                },
            ],
            [{"from": "seq", "to": "files"}],
            members=2,
        )
    )  # fmt: skip
    written, _ = run_dag(write_body)
    assert written.vertex_counts["files"].items_in == 50
    assert written.vertex_counts["seq"].items_out == 50
    read_body = (
        job_body(
            [
                {
                    "name": "src",
                    "processor": "source.files",
                    "params": {"path": path, "format": file_format},
                },
                {"name": "out", "processor": "sink.results"},
            ],
            [{"from": "src", "to": "out"}],
            members=2,
        )
    )  # fmt: skip
    read, _ = run_dag(read_body)
    rows = read.results["out"]
    if file_format == "text":
        rows = [json.loads(row["line"]) for row in rows]
    assert sorted(int(row["seq"]) for row in rows) == list(range(5, 55))


def test_redis_map_sink_writes_one_hash_field_per_key_and_logger_consumes_all(
    run_dag: RunDag, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    namespace = f"engine-test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("JETSPARK_REDIS_URL", redis_url)
    monkeypatch.setenv("JETSPARK_REDIS_NAMESPACE", namespace)
    items = [{"k": f"key-{i}", "v": i} for i in range(30)]
    body = (
        job_body(
            [
                {"name": "src", "processor": "source.items", "params": {"items": items}},
                {"name": "map", "processor": "sink.redis_map", "params": {"map": "m", "key": "k"}},
                {"name": "log", "processor": "sink.logger"},
            ],
            [{"from": "src", "to": "map"}, {"from": "src", "to": "log", "from_ordinal": 1}],
            members=2,
        )
    )  # fmt: skip
    outcome, _ = run_dag(body)
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        stored = client.hgetall(Keys(namespace).redis_map("legacy", "m"))
        assert {k: json.loads(v) for k, v in stored.items()} == {i["k"]: i for i in items}
    finally:
        client.delete(Keys(namespace).redis_map("legacy", "m"))
        client.close()
    assert outcome.vertex_counts["log"].items_in == 30
    assert outcome.vertex_counts["map"].items_in == 30


@pytest.mark.parametrize("cap", [0, 7, 13, 50, 51])
def test_sink_results_keeps_the_first_items_in_processor_order_up_to_the_cap(
    run_dag: RunDag, cap: int
) -> None:
    items = [{"i": i} for i in range(50)]  # item i on processor i % 4
    body = job_body(
        [
            {"name": "src", "processor": "source.items", "params": {"items": items}},
            {"name": "at", "processor": "map",
             "params": {"select": {"i": "i", "at": "spark_partition_id()"}}},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "src", "to": "at"}, {"from": "at", "to": "out"}],
        members=2,
    )  # fmt: skip
    outcome, _ = run_dag(body, results_cap=cap)
    kept = outcome.results["out"]
    assert all(row["at"] == row["i"] % 4 for row in kept)
    # all of processor 0's items, then processor 1's, ... up to the cap; every item counted
    in_order = [g for g in range(4) for i in range(50) if i % 4 == g][:cap]
    assert [row["at"] for row in kept] == in_order
    assert outcome.vertex_counts["out"].items_in == 50


def test_results_are_json_safe_records_the_same_as_from_row_as_dict() -> None:
    row = Row(
        a=Row(x=1, y=[Row(z=Decimal("1.5"))]),
        m={"k": Row(q=date(2020, 1, 2))},
        b=b"\x01",
        t=datetime(2020, 1, 1, 1),
        n=None,
        items=[1, None],
        f=1.5,
        ok=True,
    )
    assert json_safe(row) == json_safe(row.asDict(recursive=True))
    assert json_safe(row) == {
        "a": {"x": 1, "y": [{"z": 1.5}]},
        "m": {"k": {"q": "2020-01-02"}},
        "b": "01",
        "t": "2020-01-01T01:00:00",
        "n": None,
        "items": [1, None],
        "f": 1.5,
        "ok": True,
    }


def test_results_over_arrow_are_the_records_a_collect_gives(spark: SparkSession) -> None:
    frame = spark.createDataFrame(
        [
            ("a\\b\t\n\u00e9", 1, True, 0.1, [1, None], (2, "x")),
            (None, None, None, None, None, None),
        ],
        "s string, n long, ok boolean, f double, xs array<int>, st struct<i:int, t:string>",
    )
    assert json_native(frame.schema)
    by_rows = [json_safe(row) for row in frame.collect()]
    assert collect_records(frame) == by_rows
    assert by_rows[0]["st"] == {"i": 2, "t": "x"}


def test_types_arrow_hands_over_otherwise_are_collected() -> None:
    assert not json_native(StructType([StructField("t", TimestampType())]))
    assert not json_native(StructType([StructField("d", ArrayType(DecimalType(4, 1)))]))
    assert not json_native(StructType([StructField("m", MapType(StringType(), LongType()))]))
    twice = StructType([StructField("a", LongType()), StructField("a", StringType())])
    assert not json_native(twice)
    assert not json_native(StructType([]))
