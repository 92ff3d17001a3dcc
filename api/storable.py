"""Refuse text PostgreSQL cannot store before it reaches the database (422, not 500)."""

from __future__ import annotations

from typing import Any

from api.problems import Problem
from jetspark.dag.model import JobSpec

NO_NUL = r"^[^\x00]*$"
"""A pattern for query strings that are compared with a text column."""


def _problems(value: Any, pointer: str) -> list[dict[str, str]]:
    if isinstance(value, str):
        if "\x00" in value:
            return [{"pointer": pointer or "/", "message": "text cannot contain NUL (U+0000)"}]
        try:
            value.encode()
        except UnicodeEncodeError:
            return [{"pointer": pointer or "/", "message": "text must be valid Unicode"}]
        return []
    if isinstance(value, dict):
        found: list[dict[str, str]] = []
        for key, item in value.items():
            escaped = str(key).replace("~", "~0").replace("/", "~1")
            here = f"{pointer}/{escaped}"
            found += _problems(key, here) + _problems(item, here)
        return found
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _problems(item, f"{pointer}/{i}")]
    return []


def require_storable(body: JobSpec | dict[str, Any]) -> None:
    """422 naming every string (key or value) with a NUL or a lone surrogate.

    PostgreSQL text and JSONB refuse both; found here, the client learns where, instead of a
    500 from the INSERT.
    """
    problems = _problems(body.as_json() if isinstance(body, JobSpec) else body, "")
    if problems:
        raise Problem(
            422,
            f"{problems[0]['pointer']}: {problems[0]['message']}",
            slug="invalid-request",
            title="Invalid request",
            errors=problems,
        )
