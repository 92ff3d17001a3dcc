"""Refuse text PostgreSQL cannot store before it reaches the database (422, not 500)."""

from __future__ import annotations

from typing import Any

from api.problems import Problem
from jetspark.dag.model import JobSpec
from jetspark.jobs.accept import storable_problems

NO_NUL = r"^[^\x00]*$"
"""A pattern for query strings that are compared with a text column."""


def require_storable(body: JobSpec | dict[str, Any]) -> None:
    """422 naming every string (key or value) with a NUL or a lone surrogate
    (``jetspark.jobs.accept.storable_problems``)."""
    found = storable_problems(body.as_json() if isinstance(body, JobSpec) else body, "")
    if found:
        problems = [{"pointer": p.pointer, "message": p.message} for p in found]
        raise Problem(
            422,
            f"{problems[0]['pointer']}: {problems[0]['message']}",
            slug="invalid-request",
            title="Invalid request",
            errors=problems,
        )
