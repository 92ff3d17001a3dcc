"""Regressions for what schemathesis found: each was a 500 or an answer the document denied."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.api.leftovers import no_leftovers
from tests.api.test_errors import assert_problem

pytestmark = pytest.mark.usefixtures(no_leftovers.__name__)


def test_nul_in_the_name_filter_is_422_not_500(http: httpx.Client) -> None:
    body = assert_problem(http.get("/v1/jobs", params={"name": "a\x00b"}), 422)
    assert body["errors"][0]["pointer"] == "query:/name"


def test_nul_or_lone_surrogate_in_a_body_is_422_naming_the_place(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    word_count["dag"]["vertices"][0]["params"]["items"][0]["line"] = "a\x00b"
    for path in ("/v1/jobs", "/v1/dags:validate"):
        body = assert_problem(http.post(path, json=word_count), 422)
        assert body["errors"] == [
            {
                "pointer": "/dag/vertices/0/params/items/0/line",
                "message": "text cannot contain NUL (U+0000)",
            }
        ]
    word_count["dag"]["vertices"][0]["params"]["items"][0]["line"] = "ok"
    word_count["name"] = "\ud800"  # json.dumps escapes it; PostgreSQL cannot store it
    content = json.dumps(word_count).encode()
    body = assert_problem(
        http.post("/v1/jobs", content=content, headers={"Content-Type": "application/json"}), 422
    )
    assert body["errors"][0]["pointer"] == "/name"


def test_a_body_that_is_not_utf8_is_422_like_malformed_json(http: httpx.Client) -> None:
    sent = http.post("/v1/jobs", content=b"\xff\xfe{", headers={"Content-Type": "application/json"})
    assert assert_problem(sent, 422)["title"] == "Invalid request"


def test_405_allow_names_every_method_of_the_path(http: httpx.Client) -> None:
    refused = http.request("OPTIONS", "/v1/jobs")
    assert_problem(refused, 405)
    assert refused.headers["allow"] == "GET, POST"
    one_job = "/v1/jobs/00000000-0000-0000-0000-000000000000"
    assert http.put(one_job).headers["allow"] == "DELETE, GET"
    assert http.delete(f"{one_job}/snapshots").headers["allow"] == "GET, POST"


def test_a_results_cursor_beyond_bigint_is_422_not_500(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    job_id = http.post("/v1/jobs", json=word_count).json()["id"]
    huge = http.get(f"/v1/jobs/{job_id}/results", params={"cursor": "9" * 24})
    assert assert_problem(huge, 422)["errors"][0]["pointer"] == "query:/cursor"
    assert http.get(f"/v1/jobs/{job_id}/results", params={"cursor": "9" * 18}).status_code == 200
