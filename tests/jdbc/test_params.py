"""What ``source.jdbc`` and ``sink.jdbc`` accept, refused at validation naming the param."""

from __future__ import annotations

from typing import Any

import pytest

from jetspark.dag.errors import DagValidationError
from jetspark.dag.kinds import PROCESSORS, JdbcSource
from jetspark.dag.model import JobSpec
from jetspark.dag.validate import validate_job
from tests.jdbc.conftest import body


def job(source: dict[str, Any], sink: dict[str, Any] | None = None) -> JobSpec:
    return JobSpec.model_validate(
        body(
            [
                {"name": "r", "processor": "source.jdbc",
                 "params": {"connection": "c", "table": "t", **source}},
                {"name": "w", "processor": "sink.jdbc",
                 "params": {"connection": "c", "table": "u", **(sink or {})}},
            ],
            [{"from": "r", "to": "w"}],
        )
    )  # fmt: skip


@pytest.mark.parametrize(
    ("source", "sink", "pointer"),
    [
        ({"partition_column": "id"}, {}, "/dag/vertices/0/params"),
        ({"lower_bound": 1, "upper_bound": 9}, {}, "/dag/vertices/0/params"),
        (
            {"partition_column": "id", "lower_bound": 9, "upper_bound": 9},
            {},
            "/dag/vertices/0/params",
        ),
        ({"columns": ["a"], "incremental_column": "id"}, {}, "/dag/vertices/0/params"),
        ({"columns": ["a", "a"]}, {}, "/dag/vertices/0/params/columns"),
        ({"columns": []}, {}, "/dag/vertices/0/params/columns"),
        ({"where": "sum(a) > 1"}, {}, "/dag/vertices/0/params/where"),
        ({"url": "jdbc:postgresql://h/db"}, {}, "/dag/vertices/0/params/url"),
        ({"fetch_size": 0}, {}, "/dag/vertices/0/params/fetch_size"),
        ({"fetch_size": 1_000_001}, {}, "/dag/vertices/0/params/fetch_size"),
        ({}, {"mode": "upsert"}, "/dag/vertices/1/params/mode"),
        ({}, {"password": "x"}, "/dag/vertices/1/params/password"),
    ],
)
def test_bad_params_are_refused_naming_them(
    source: dict[str, Any], sink: dict[str, Any], pointer: str
) -> None:
    with pytest.raises(DagValidationError) as refused:
        validate_job(job(source, sink))
    assert pointer in [p.pointer for p in refused.value.problems], refused.value.problems


def test_a_read_fetches_ten_thousand_rows_per_round_trip_unless_told() -> None:
    default = validate_job(job({})).params["r"]
    told = validate_job(job({"fetch_size": 500})).params["r"]
    assert isinstance(default, JdbcSource) and isinstance(told, JdbcSource)
    assert default.fetch_size == 10_000 and told.fetch_size == 500


def test_an_incremental_column_makes_the_source_a_stream() -> None:
    kind = PROCESSORS["source.jdbc"]
    batch = validate_job(job({})).params["r"]
    stream = validate_job(job({"incremental_column": "id", "where": "v > 0"})).params["r"]
    assert kind.is_bounded(batch) and not kind.is_bounded(stream)
    assert kind.is_endless(stream)
