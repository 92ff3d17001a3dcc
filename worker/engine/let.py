"""A value bound once in a Spark Column tree, for expressions that use it several times.

A ``Column`` is a tree, not a graph: a subexpression used n times is written (and analysed,
optimised and, when it is not deterministic, evaluated) n times, so n uses at each of d
nested steps make n**d copies. ``let`` binds the value to a lambda's variable instead
(``element_at(transform(array(value), x -> body(x)), 1)``): the value is written and computed
once, each use is the variable. The body is a lambda, so it must not call ``reflect``/
``java_method`` (Spark evaluates no such call inside one): compute those into ``value``.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F


def let(value: Column, body: Callable[[Column], Column]) -> Column:
    """``body(value)``, with ``value`` computed once per row."""
    return F.element_at(F.transform(F.array(value), body), 1)


def let_all(values: dict[str, Column], body: Callable[[Column], Column]) -> Column:
    """``body(bound)``, each value computed once per row and read as ``bound[name]``."""
    return let(F.struct(*[value.alias(name) for name, value in values.items()]), body)
