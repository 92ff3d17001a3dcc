"""One-line errors: every failure the CLI expects ends as a message on stderr and an exit code."""

from __future__ import annotations

from typing import Any

EXIT_JOB_NOT_COMPLETED = 1
"""``submit --wait`` saw the job end FAILED or CANCELLED."""
EXIT_ERROR = 2
"""The command could not do what was asked (bad input, refused request, server unreachable)."""


class CliError(Exception):
    """Raised anywhere in a command; ``main`` prints ``error: <message>`` and exits."""

    def __init__(self, message: str, *, exit_code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def one_line(text: str) -> str:
    """Collapse whitespace so that a message from anywhere stays on one line."""
    return " ".join(text.split())


def first_line(text: str) -> str:
    """The first non-empty line, for errors whose later lines are SQL, hints or tracebacks."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def describe_problem(status: int, body: Any) -> str:
    """An RFC 9457 problem as one line: detail, then each ``pointer: message``."""
    if not isinstance(body, dict):
        return f"HTTP {status}"
    title = str(body.get("title") or f"HTTP {status}")
    detail = body.get("detail")
    errors = body.get("errors")
    if isinstance(errors, list) and errors:
        listed = "; ".join(
            f"{e.get('pointer', '/')}: {e.get('message', '')}"
            for e in errors
            if isinstance(e, dict)
        )
        return one_line(f"{title} ({status}): {listed}")
    if detail:
        return one_line(f"{title} ({status}): {detail}")
    return one_line(f"{title} ({status})")
