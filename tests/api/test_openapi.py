"""The committed OpenAPI document is the app's, and the app keeps to it under fuzzing."""

from __future__ import annotations

import json
from pathlib import Path

from api.openapi_dump import openapi_document, render

COMMITTED = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


def test_committed_openapi_matches_the_app() -> None:
    assert COMMITTED.read_text() == render(openapi_document()), (
        "openapi/openapi.json drifted from the app: run `make openapi`"
    )


def test_operation_ids_are_stable_and_unique() -> None:
    document = json.loads(COMMITTED.read_text())
    ids = [op["operationId"] for path in document["paths"].values() for op in path.values()]
    assert len(ids) == len(set(ids))
    assert {"jobs-submit", "jobs-get", "jobs-list", "jobs-cancel", "dags-validate"} <= set(ids)
