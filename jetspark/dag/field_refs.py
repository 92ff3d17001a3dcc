"""Fields an expression reads that its input does not have, found at submission.

Where the DAG tells which fields a vertex's input carries (``field_types.DagFields``: items,
a sequence, a Redis stream, and what maps, aggregates, windows and joins make of them), every
expression a vertex evaluates over that input, and the key of every partitioned edge over
its sender's output, may read only those fields. Otherwise Spark's analysis refuses the job
when it runs (``UNRESOLVED_COLUMN``), a failure submission can tell the user in advance.
Where the fields are unknown (csv, json or parquet files, a table, a topic, a ``python``
vertex, several inbound edges) nothing is checked; nor where more fields may come than the
DAG names (a text files source's partition columns, from ``key=value`` directories, and the
transforms that pass their input's fields on).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import sqlglot
from sqlglot import exp

from jetspark.dag import kinds as p
from jetspark.dag.errors import DagProblem
from jetspark.dag.field_types import DagFields, Fields
from jetspark.dag.kinds import PROCESSORS
from jetspark.dag.model import JobSpec, Routing
from jetspark.dag.plan import ExecutionPlan
from jetspark.dag.validate import expressions_in

SIDES = {"build_key": 0, "probe_key": 1}
"""Params read over one inbound edge of several (a hash join's build and probe sides)."""

_NILADIC = frozenset(
    {"current_date", "current_timestamp", "current_time", "localtimestamp", "current_user",
     "user", "session_user", "current_catalog", "current_database", "current_schema"}
)  # fmt: skip
"""Names Spark reads as functions without parentheses when no field has them."""


@lru_cache(maxsize=1024)
def fields_read(expression: str) -> frozenset[str]:
    """The top-level fields ``expression`` reads, in lower case (Spark resolves names
    without regard to case): ``s.a`` reads ``s``; a lambda's variables are not fields."""
    tree = sqlglot.parse_one(expression, read="spark")  # checked by validation: it parses
    names = {str(column.parts[0].name).lower() for column in tree.find_all(exp.Column)}
    return frozenset(names - _NILADIC)


def missing(expression: str, fields: Fields) -> list[str]:
    """The fields ``expression`` reads that ``fields`` lacks (none when they are unknown)."""
    if fields is None:
        return []
    have = {name.lower() for name in fields}
    return sorted(name for name in fields_read(expression) if name not in have)


def unknown_field_problems(spec: JobSpec, plan: ExecutionPlan) -> list[DagProblem]:
    """Each expression of the DAG that reads a field its input is known not to have."""
    fields = _ClosedFields(plan)
    problems: list[DagProblem] = []
    for i, vertex in enumerate(spec.dag.vertices):
        kind = PROCESSORS[vertex.processor]
        params = plan.vertex(vertex.name).params
        inbound = fields.inbound.get(vertex.name, {})
        for param in (*kind.expression_fields, *kind.aggregate_fields):
            if param in SIDES:
                given = fields.input(vertex.name, SIDES[param])
            elif len(inbound) == 1:
                given = fields.input(vertex.name)
            else:
                continue  # a source's own expressions, or several inputs: not told here
            for sub, expression in expressions_in(getattr(params, param, None)):
                absent = missing(expression, given)
                if absent:
                    problems.append(
                        DagProblem(
                            f"/dag/vertices/{i}/params/{param}{sub}",
                            f"vertex {vertex.name!r}: {expression!r} reads {_names(absent)}, "
                            f"which its input does not have (it has: {_names(given)})",
                        )
                    )
    for i, edge in enumerate(spec.dag.edges):
        if edge.routing is not Routing.partitioned or edge.key is None:
            continue
        given = fields.output(edge.source)
        absent = missing(edge.key, given)
        if absent:
            problems.append(
                DagProblem(
                    f"/dag/edges/{i}/key",
                    f"edge {edge.label}: the key {edge.key!r} reads {_names(absent)}, which "
                    f"{edge.source!r} does not emit (it emits: {_names(given)})",
                )
            )
    return problems


class _ClosedFields(DagFields):
    """``DagFields``, where a text files source's fields are unknown: partition columns of
    ``key=value`` directories come with its lines, so nothing read after it is refused until
    a vertex names its own output (a map, an aggregate, a window)."""

    def output(self, vertex: str) -> Fields:
        if isinstance(self.vertices[vertex].params, p.FilesSource):
            return None
        return super().output(vertex)


def _names(names: Iterable[str] | None) -> str:
    return ", ".join(sorted(names or ())) or "nothing"
