"""A rejected DAG: every problem found, each with a JSON pointer into the submitted body."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DagProblem:
    pointer: str
    """RFC 6901 pointer into the submitted body, e.g. ``/dag/edges/1/key``."""
    message: str


class DagValidationError(Exception):
    def __init__(self, problems: list[DagProblem]) -> None:
        super().__init__("; ".join(f"{p.pointer}: {p.message}" for p in problems))
        self.problems = problems
