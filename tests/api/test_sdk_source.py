"""``GET /v1/jobs/{id}/sdk``: the SDK script of a submitted job builds the same body."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from jetspark.sdk import DAG


def test_the_script_of_a_job_rebuilds_its_body(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    body = {**word_count, "name": "<script>alert('x')</script>"}
    job = http.post("/v1/jobs", json=body).json()
    http.post(f"/v1/jobs/{job['id']}/cancel")
    answer = http.get(f"/v1/jobs/{job['id']}/sdk")
    assert answer.status_code == 200
    source = answer.json()["python"]
    assert source.startswith("from jetspark.sdk import DAG, Edge\n")
    scope: dict[str, Any] = {"__name__": "snippet"}
    exec(compile(source, "<sdk>", "exec"), scope)
    assert scope["dag"].to_json() == DAG.from_json(body).to_json()


def test_an_unknown_job_has_no_script(http: httpx.Client) -> None:
    answer = http.get(f"/v1/jobs/{uuid.uuid4()}/sdk")
    assert answer.status_code == 404
    assert answer.headers["content-type"] == "application/problem+json"
