"""The aggregation stages of SPEC §5: single, accumulate (partial results), combine (merge).

A combine stage names the same aggregations as its accumulate stage; each partial result is
merged by the function that merges it: counts and sums add up, min of mins, max of maxes.
``avg`` cannot be merged from averages, so its accumulate stage emits a partial
``{sum, count}`` struct and its combine stage divides the merged sum by the merged count.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from worker.engine.errors import EngineError

_CALL = re.compile(r"^\s*(\w+)\s*\((.*)\)\s*$", re.DOTALL)
_AVERAGES = frozenset({"avg", "mean"})
MERGE = {
    "count": "sum",
    "sum": "sum",
    "min": "min",
    "max": "max",
    "first": "first",
    "last": "last",
    "any_value": "any_value",
    "bool_and": "bool_and",
    "bool_or": "bool_or",
    "every": "bool_and",
    "some": "bool_or",
}
"""How each partial result merges, by the function that produced it."""


def _call(expression: str) -> tuple[str, str] | None:
    match = _CALL.match(expression)
    return (match.group(1).lower(), match.group(2)) if match else None


def single(field: str, expression: str) -> Column:
    return F.expr(expression).alias(field)


def accumulate(field: str, expression: str) -> Column:
    call = _call(expression)
    if call is not None and call[0] in _AVERAGES:
        argument = call[1]
        partial = f"named_struct('sum', sum({argument}), 'count', count({argument}))"
        return F.expr(partial).alias(field)
    return F.expr(expression).alias(field)


def combine(field: str, expression: str) -> Column:
    call = _call(expression)
    name = call[0] if call else ""
    column = f"`{field}`"
    if name in _AVERAGES:
        return F.expr(f"sum({column}.sum) / sum({column}.count)").alias(field)
    merge = MERGE.get(name)
    if merge is None:
        mergeable = ", ".join(sorted(MERGE.keys() | _AVERAGES))
        raise EngineError(f"combine cannot merge {expression!r}; mergeable: {mergeable}")
    return F.expr(f"{merge}({column})").alias(field)


STAGES: dict[str, Callable[[str, str], Column]] = {
    "single": single,
    "accumulate": accumulate,
    "combine": combine,
}


def merge(field: str, expression: str) -> Column:
    """Partial results merged into one partial result of the same shape (an aggregate).

    ``combine`` finishes as it merges (an average's ``{sum, count}`` becomes a number); state
    carried from one streaming epoch to the next must stay partial, so the average's struct
    is merged field by field here and everything else merges as ``combine`` does.
    """
    call = _call(expression)
    if call is not None and call[0] in _AVERAGES:
        column = f"`{field}`"
        merged = f"named_struct('sum', sum({column}.sum), 'count', sum({column}.count))"
        return F.expr(merged).alias(field)
    return combine(field, expression)


def finish(field: str, expression: str) -> Column:
    """One merged partial result turned into the final value (a projection, not an aggregate):
    what ``combine`` gives for a group holding that single partial."""
    call = _call(expression)
    column = f"`{field}`"
    if call is not None and call[0] in _AVERAGES:
        return F.expr(f"{column}.sum / {column}.count").alias(field)
    return F.col(column).alias(field)


def counts(expression: str) -> bool:
    """Whether the aggregation is a ``count``: its value over no rows is 0, not NULL."""
    call = _call(expression)
    return call is not None and call[0] == "count"
