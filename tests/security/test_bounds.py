"""Numbers, nesting and sizes a hostile DAG could blow up (issue 11): each refused with a
clear problem naming its pointer, or the job failed with a clear error."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from jetspark.dag.errors import DagValidationError
from jetspark.dag.model import JobSpec
from jetspark.dag.validate import validate_job
from tests.api.test_errors import assert_problem
from tests.engine.conftest import job_body


def _pointers(body: dict[str, Any]) -> list[str]:
    with pytest.raises(DagValidationError) as refused:
        validate_job(JobSpec.model_validate(body))
    return [p.pointer for p in refused.value.problems]


def _sequence(**params: Any) -> dict[str, Any]:
    return job_body(
        [
            {"name": "seq", "processor": "source.sequence", "params": params},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "seq", "to": "out"}],
    )  # fmt: skip


def test_numbers_the_engine_sizes_by_are_bounded() -> None:
    assert _pointers(_sequence(count=2**60)) == ["/dag/vertices/0/params/count"]
    fast = _sequence(count=None, rate_per_s=1e12)
    assert _pointers(fast) == ["/dag/vertices/0/params/rate_per_s"]
    for field, value in [
        ("partition_count", 10**9),
        ("timeout_s", 1e12),
        ("members", 10**6),
        ("local_parallelism", 10**6),
    ]:
        body = _sequence(count=1)
        body["config"][field] = value
        assert f"/config/{field}" in _pointers(body)


def test_a_sliding_window_cannot_put_an_item_in_millions_of_windows() -> None:
    body = job_body(
        [
            {"name": "seq", "processor": "source.sequence", "params": {"count": None}},
            {"name": "ts", "processor": "insert_watermarks", "params": {"timestamp": "seq"}},
            {"name": "w", "processor": "window",
             "params": {"timestamp": "seq", "type": "sliding", "size_ms": 10**9, "slide_ms": 1,
                        "aggregations": {"n": "count(*)"}}},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "seq", "to": "ts"}, {"from": "ts", "to": "w"}, {"from": "w", "to": "out"}],
    )  # fmt: skip
    assert "/dag/vertices/2/params/slide_ms" in _pointers(body)


def test_deep_params_are_refused() -> None:
    deep: Any = 1
    for _ in range(200):
        deep = [deep]
    body = _sequence(count=1)
    body["dag"]["vertices"][0]["params"]["nested"] = deep
    assert _pointers(body) == ["/dag/vertices/0/params"]


def _wide_dag(vertices: int) -> dict[str, Any]:
    """One source, then vertices that all rejoin pairwise with unbuffered priorities."""
    names = [f"v{i}" for i in range(vertices)]
    specs = [{"name": names[0], "processor": "source.sequence", "params": {"count": 1}}]
    specs += [{"name": n, "processor": "map", "params": {"select": {"seq": "seq"}}}
              for n in names[1:-1]]  # fmt: skip
    specs += [{"name": names[-1], "processor": "sink.results"}]
    edges: list[dict[str, Any]] = [{"from": names[0], "to": n} for n in names[1:-1]]
    edges += [
        {"from": n, "to": names[-1], "to_ordinal": i, "priority": i}
        for i, n in enumerate(names[1:-1])
    ]
    return job_body(specs, edges)


def test_a_big_bad_dag_lists_at_most_a_hundred_problems() -> None:
    pointers = _pointers(_wide_dag(256))
    assert len(pointers) == 101 and pointers[-1] == "/dag"


def test_deep_json_bodies_and_keys_are_4xx_problems(http: httpx.Client) -> None:
    deep = "[" * 5000 + "]" * 5000
    response = http.post(
        "/v1/jobs", content=deep.encode(), headers={"Content-Type": "application/json"}
    )
    assert_problem(response, 422)
    key = "[" * 2000 + "]" * 2000
    params = {"key": key, "key_type": "json"}
    assert_problem(http.get("/v1/partitions", params=params), 422)
