"""Every error is problem+json: auth, 404, 405, 413, 422 with pointers, 429, readiness."""

from __future__ import annotations

from typing import Any

import httpx
import mmh3
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from jetspark.settings import ApiSettings
from tests.api.conftest import TOKEN

PROBLEM = "application/problem+json"


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["title"] and body["detail"] and body["type"]
    return body


def test_health_needs_no_token_and_everything_else_does(api_url: str) -> None:
    assert httpx.get(f"{api_url}/healthz").status_code == 200
    ready = httpx.get(f"{api_url}/readyz").json()
    assert ready["checks"] == {"postgresql": "ok", "redis": "ok", "snapshot_backups": "ok"}
    missing = assert_problem(httpx.get(f"{api_url}/v1/jobs"), 401)
    assert "Bearer" in missing["detail"]
    wrong = httpx.get(f"{api_url}/v1/jobs", headers={"Authorization": "Bearer nope"})
    assert_problem(wrong, 401)
    assert wrong.headers["www-authenticate"].startswith("Bearer")


def test_unknown_route_and_wrong_method(http: httpx.Client) -> None:
    assert_problem(http.get("/v1/nothing-here"), 404)
    assert_problem(http.delete("/v1/jobs"), 405)


def test_body_over_the_limit_is_413(http: httpx.Client, word_count: dict[str, Any]) -> None:
    word_count["dag"]["vertices"][0]["params"]["items"] = [{"line": "x" * 1000}] * 100
    assert_problem(http.post("/v1/jobs", json=word_count), 413)

    def chunks() -> Any:
        for _ in range(100):
            yield b"x" * 1024

    streamed = http.post("/v1/jobs", content=chunks(), headers={"Content-Type": "application/json"})
    assert_problem(streamed, 413)


def test_malformed_json_and_extra_fields_are_422_with_pointers(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    broken = http.post(
        "/v1/jobs", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert_problem(broken, 422)
    word_count["dag"]["vertices"][1]["colour"] = "red"
    body = assert_problem(http.post("/v1/jobs", json=word_count), 422)
    assert {"pointer": "/dag/vertices/1/colour", "message": "Extra inputs are not permitted"} in (
        body["errors"]
    )


@pytest.mark.parametrize(
    ("mutate", "pointer", "words"),
    [
        (
            lambda b: b["dag"]["vertices"][1].update(processor="nope"),
            "/dag/vertices/1/processor",
            "unknown processor",
        ),
        (lambda b: b["dag"]["edges"][1].pop("key"), "/dag/edges/1/key", "needs a key"),
        (
            lambda b: b["dag"]["edges"].append(
                {"from": "combine", "to": "tokenize", "to_ordinal": 1}
            ),
            "/dag/edges",
            "cycle",
        ),
        (
            lambda b: b["dag"]["vertices"][1]["params"].update(explode="reflect('a', 'b')"),
            "/dag/vertices/1/params/explode",
            "reflect",
        ),
        (
            lambda b: b["dag"]["vertices"].append(b["dag"]["vertices"][0]),
            "/dag/vertices/5/name",
            "duplicate",
        ),
        (
            lambda b: b["dag"]["vertices"][1].update(
                processor="python", params={"class": "os:system"}
            ),
            "/dag/vertices/1/params/class",
            "not in the allowed Python modules",
        ),
        (
            lambda b: b["dag"]["vertices"][1].update(
                processor="python", params={"class": "jetspark.example_processors.words:Nope"}
            ),
            "/dag/vertices/1/params/class",
            "not a jetspark.processor.Processor subclass",
        ),
    ],
)
def test_dag_rejections_name_the_place(
    http: httpx.Client, word_count: dict[str, Any], mutate: Any, pointer: str, words: str
) -> None:
    mutate(word_count)
    for path in ("/v1/jobs", "/v1/dags:validate"):
        body = assert_problem(http.post(path, json=word_count), 422)
        assert any(e["pointer"] == pointer and words in e["message"] for e in body["errors"]), body


def test_validate_returns_the_plan(http: httpx.Client, word_count: dict[str, Any]) -> None:
    report = http.post("/v1/dags:validate", json=word_count).json()
    assert report["valid"] is True
    exchanges = [(e["source"], e["exchange"]) for e in report["plan"]["edges"]]
    assert exchanges == [
        ("lines", "fused"),
        ("tokenize", "shuffle"),
        ("accumulate", "shuffle"),
        ("combine", "fused"),
    ]


@pytest.mark.parametrize(
    ("params", "key"),
    [
        ({"key": "hello"}, "hello"),
        ({"key": "ä漢😀", "partition_count": 7}, "ä漢😀"),
        ({"key": "-5", "key_type": "int"}, -5),
    ],
)
def test_partitions_follow_spec_formula(
    http: httpx.Client, params: dict[str, Any], key: str | int
) -> None:
    count = int(params.get("partition_count", 271))
    view = http.get("/v1/partitions", params=params).json()
    raw = (
        key.to_bytes(8, "little", signed=True)
        if isinstance(key, int)
        else key.encode() + b"\0" * (-len(key.encode()) % 4)
    )
    assert view["partition_id"] == mmh3.hash(raw, 42) % count
    assert view["canonical_hex"] == raw.hex()


def test_partitions_rejects_a_bad_int(http: httpx.Client) -> None:
    assert_problem(http.get("/v1/partitions", params={"key": "x", "key_type": "int"}), 422)


def test_rate_limit_is_429(database_url: str, redis_url: str, redis_namespace: str) -> None:
    app = create_app(
        database_url=database_url,
        redis_url=redis_url,
        redis_namespace=redis_namespace,
        api_settings=ApiSettings(tokens=[TOKEN], rate_limit_per_s=0.5, rate_limit_burst=2),
    )
    with TestClient(app) as client:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        statuses = [client.get("/v1/jobs", headers=headers).status_code for _ in range(3)]
        assert statuses == [200, 200, 429]
        limited = client.get("/v1/jobs", headers=headers)
        assert limited.headers["content-type"] == PROBLEM and limited.headers["retry-after"]


def test_readyz_names_what_is_down(database_url: str) -> None:
    app = create_app(database_url=database_url, redis_url="redis://127.0.0.1:1/0")
    with TestClient(app) as client:
        body = client.get("/readyz")
        assert body.status_code == 503 and "redis" in body.json()["detail"]
