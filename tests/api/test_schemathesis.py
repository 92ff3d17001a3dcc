"""Property-based conformance: schemathesis fuzzes every operation of the live server.

The schema is the committed ``openapi/openapi.json``; the first test checks that the running
uvicorn serves exactly that document. Every generated request, valid or not, must get
an answer the document allows: no 5xx, a documented status code and content type, and a body
that matches the documented schema; and a request the schema forbids must get a 4xx.

The one check left out is "schema-valid data is accepted": a DAG's graph rules (at least one
vertex, no cycles, known processors, contiguous ordinals, ...) and the opaque list cursor are
checked by the server, not expressible in JSON Schema, and answered with a documented 422.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from tests.api.conftest import EXAMPLE, TOKEN
from tests.api.leftovers import no_leftovers

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures(no_leftovers.__name__)]

MAX_EXAMPLES = 60
"""Per operation and generation mode; 12 operations give well over 500 cases."""
MIN_CASES = 500

CASES: Counter[str] = Counter()


COMMITTED = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"
# Loaded at import so pytest gets one test per operation (a lazy fixture-loaded schema runs
# them as subtests, which this pytest version does not support).
# The token goes in as the document's security scheme, so schemathesis knows which requests
# lack it on purpose (negative cases) and expects 401 for those.
CONFIG = schemathesis.Config.from_dict({"auth": {"openapi": {"HTTPBearer": {"bearer": TOKEN}}}})
STREAMS = ["jobs-events", "jobs-events-all"]
"""Server-Sent Event streams stay open while a job lives, so a fuzzed call would only time
out; their answers (200 stream, 401, 404, 422 on a forged Last-Event-ID) are asserted in
test_events.py."""
schema = schemathesis.openapi.from_path(COMMITTED, config=CONFIG).exclude(operation_id=STREAMS)

KNOWN_JOBS: list[str] = []
"""Ids of jobs on the live server; most generated job ids are swapped for one of them."""


@schema.hook
def map_path_parameters(
    context: schemathesis.HookContext, path_parameters: dict[str, Any] | None
) -> dict[str, Any] | None:
    """Point three in four well-formed job ids at real jobs, so 200 and 409 get fuzzed too.

    The choice follows from the generated id, so Hypothesis replays stay deterministic; a
    malformed id (a negative case) is left alone.
    """
    job_id = (path_parameters or {}).get("job_id")
    if path_parameters is None or not KNOWN_JOBS or not isinstance(job_id, str):
        return path_parameters
    try:
        number = uuid.UUID(job_id).int
    except ValueError:
        return path_parameters
    if str(uuid.UUID(job_id)) != job_id or number % 4 == 0:
        return path_parameters
    return {**path_parameters, "job_id": KNOWN_JOBS[number % len(KNOWN_JOBS)]}


@schema.hook
def map_query(
    context: schemathesis.HookContext, query: dict[str, Any] | None
) -> dict[str, Any] | None:
    """Cap a valid long-poll ``wait_s`` at half a second: an ``If-None-Match: *`` on a real
    job would otherwise hold the case for up to a minute. Invalid values are left alone."""
    wait_s = (query or {}).get("wait_s")
    if query is None or isinstance(wait_s, bool) or not isinstance(wait_s, int | float):
        return query
    if 0.5 < wait_s <= 3600:
        return {**query, "wait_s": 0.5}
    return query


@pytest.fixture(scope="module")
def known_jobs(http_module: httpx.Client, word_count_body: dict[str, Any]) -> list[str]:
    """A few jobs, some already ended, so transitions meet both legal and illegal moves."""
    KNOWN_JOBS.clear()
    for action in (None, "suspend", "cancel", None):
        created = http_module.post("/v1/jobs", json=word_count_body)
        assert created.status_code == 201, created.text
        job_id = created.json()["id"]
        if action:
            http_module.post(f"/v1/jobs/{job_id}/{action}").raise_for_status()
        KNOWN_JOBS.append(job_id)
    return KNOWN_JOBS


@pytest.fixture(scope="module")
def http_module(api_url: str) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=api_url, headers=headers, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def word_count_body() -> dict[str, Any]:
    body: dict[str, Any] = json.loads(EXAMPLE.read_text())
    return body


def test_the_live_server_serves_the_committed_document(api_url: str) -> None:
    assert httpx.get(f"{api_url}/openapi.json").json() == json.loads(COMMITTED.read_text())


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,  # a shared 2-core machine: latency is not what this test is about
    database=None,  # no .hypothesis/ in the worktree; every run explores afresh
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_conforms(
    case: schemathesis.Case[Any], api_url: str, known_jobs: list[str]
) -> None:
    CASES[case.operation.label] += 1
    if case.path_parameters and case.path_parameters.get("job_id") in known_jobs:
        CASES["(on a real job)"] += 1
    case.call_and_validate(base_url=api_url, timeout=30, excluded_checks=[positive_data_acceptance])


def test_enough_cases_ran() -> None:
    """Runs after the fuzzing above (pytest keeps file order) and reports its size."""
    total = sum(n for label, n in CASES.items() if not label.startswith("("))
    operations = sum(1 for label in CASES if not label.startswith("("))
    print(f"schemathesis: {total} cases over {operations} operations: {dict(CASES)}")
    assert total >= MIN_CASES, f"only {total} cases ran"
    assert CASES["(on a real job)"] > 0, "no case reached a real job"
