"""The aggregation stages of SPEC §5: single, accumulate (partial results), combine (merge).

A combine stage names the same aggregations as its accumulate stage; each partial result is
merged by the function that merges it: counts and sums add up, min of mins, max of maxes.
``avg`` cannot be merged from averages, so its accumulate stage emits a partial
``{sum, count}`` struct and its combine stage divides the merged sum by the merged count.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, DoubleType, LongType

from jetspark.dag.expressions import quote_identifier
from worker.engine.errors import EngineError
from worker.engine.expressions import Call, user_call, user_column

_AVERAGES = frozenset({"avg", "mean"})
MERGE: dict[str, Callable[[Column], Column]] = {
    "count": F.sum,
    "sum": F.sum,
    "min": F.min,
    "max": F.max,
    "first": F.first,
    "last": F.last,
    "any_value": F.any_value,
    "bool_and": F.bool_and,
    "bool_or": F.bool_or,
    "every": F.bool_and,
    "some": F.bool_or,
}
"""How each partial result merges, by the function that produced it."""
_KEEPS_TYPE = frozenset(MERGE) - {"count", "sum"}
"""Merges whose result has their input's type (Spark's min, max, first, last, any_value and
the boolean ones)."""


def _column(field: str) -> Column:
    return F.col(quote_identifier(field))


def _average(call: Call | None) -> Column | None:
    """The one argument of a plain ``avg``/``mean`` call, else None."""
    if call is None or call.name not in _AVERAGES:
        return None
    if call.distinct or len(call.arguments) != 1:
        raise EngineError(f"{call.name}() of more than one plain argument cannot be staged")
    return call.arguments[0]


def _partial_average(total: Column, count: Column) -> Column:
    return F.struct(total.alias("sum"), count.alias("count"))


def single(field: str, expression: str) -> Column:
    return user_column(expression, aggregates=True).alias(field)


def accumulate(field: str, expression: str) -> Column:
    argument = _average(user_call(expression))
    if argument is not None:
        return _partial_average(F.sum(argument), F.count(argument)).alias(field)
    return user_column(expression, aggregates=True).alias(field)


def combine(field: str, expression: str) -> Column:
    call = user_call(expression)
    name = call.name if call else ""
    column = _column(field)
    if name in _AVERAGES:
        return (F.sum(column.getField("sum")) / F.sum(column.getField("count"))).alias(field)
    merge = MERGE.get(name)
    if merge is None:
        mergeable = ", ".join(sorted(MERGE.keys() | _AVERAGES))
        raise EngineError(f"combine cannot merge {expression!r}; mergeable: {mergeable}")
    return merge(column).alias(field)


STAGES: dict[str, Callable[[str, str], Column]] = {
    "single": single,
    "accumulate": accumulate,
    "combine": combine,
}


def merged_type(expression: str, partial: DataType) -> DataType | None:
    """The type ``combine`` gives partial results of type ``partial``, when it is that type
    (always nullable: Spark's merges are), known without asking Spark to analyse the merge;
    None when only an analysis can tell (an average, a sum of decimals)."""
    call = user_call(expression)
    name = call.name if call else ""
    if name in _KEEPS_TYPE or (
        name in {"count", "sum"} and isinstance(partial, LongType | DoubleType)
    ):
        return partial  # a sum of bigints is a bigint, of doubles a double
    return None


def merge(field: str, expression: str) -> Column:
    """Partial results merged into one partial result of the same shape (an aggregate).

    ``combine`` finishes as it merges (an average's ``{sum, count}`` becomes a number); state
    carried from one streaming epoch to the next must stay partial, so the average's struct
    is merged field by field here and everything else merges as ``combine`` does.
    """
    if _average(user_call(expression)) is not None:
        column = _column(field)
        merged = _partial_average(F.sum(column.getField("sum")), F.sum(column.getField("count")))
        return merged.alias(field)
    return combine(field, expression)


def finish(field: str, expression: str) -> Column:
    """One merged partial result turned into the final value (a projection, not an aggregate):
    what ``combine`` gives for a group holding that single partial."""
    column = _column(field)
    if _average(user_call(expression)) is not None:
        return (column.getField("sum") / column.getField("count")).alias(field)
    return column.alias(field)


def counts(expression: str) -> bool:
    """Whether the aggregation is a ``count``: its value over no rows is 0, not NULL."""
    call = user_call(expression)
    return call is not None and call.name == "count"
