"""User expressions as Spark ``Column``s built from the tree that was checked.

The text is parsed once, by Spark's own parser (the one ``F.expr`` would use); every node of
that tree is checked (its kind, and every function it calls against the API's allow-list in
``jetspark.dag.expressions``); size-taking calls get a guard; the ``Column`` is made from that
very tree. Nothing is re-parsed and no SQL text is built from user text, so what runs is
exactly what was checked.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

from pyspark import SparkContext
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from jetspark.dag.expressions import (
    AGGREGATE_FUNCTIONS,
    HIGHER_ORDER_FUNCTIONS,
    SCALAR_FUNCTIONS,
    SIZE_ARGUMENT,
    ExpressionError,
    text_problem,
)
from jetspark.settings import ExpressionLimits
from worker.engine.errors import EngineError

_NODES = frozenset(
    """
    Literal UnresolvedAttribute UnresolvedStar UnresolvedExtractValue UnresolvedFunction
    LambdaFunction UnresolvedNamedLambdaVariable Cast CaseWhen
    Add Subtract Multiply Divide IntegralDivide Remainder UnaryMinus UnaryPositive Pmod
    BitwiseAnd BitwiseOr BitwiseXor BitwiseNot
    And Or Not EqualTo EqualNullSafe LessThan LessThanOrEqual GreaterThan GreaterThanOrEqual
    In IsNull IsNotNull Like ILike RLike LikeAll NotLikeAll LikeAny NotLikeAny Concat
    """.split()
)
"""The kinds of node Spark's parser makes of an allowed expression; anything else (a
subquery, a parameter marker, a qualified function name...) is refused."""


@dataclass(frozen=True)
class Call:
    """An expression that is one function call at its top: its name and arguments."""

    name: str
    distinct: bool
    arguments: list[Column]


def _jvm_of(context: SparkContext) -> Any:
    return context._jvm


def _session() -> SparkSession:
    # Any session will do: the parser is the same and a Column built from a tree belongs to
    # no session. The instantiated one is known without a round trip; a job thread of its own
    # (a streaming job's) has no active session anyway.
    spark = SparkSession._instantiatedSession or SparkSession.getActiveSession()
    if spark is None:
        raise EngineError("no active SparkSession to parse an expression with")
    return spark


def _children(node: Any) -> list[Any]:
    children = node.children()
    return [children.apply(i) for i in range(children.size())]


def _function_name(node: Any) -> str:
    parts = node.nameParts()
    if parts.size() != 1:
        raise ExpressionError(f"function {parts.mkString('.')}() is not allowed")
    return str(parts.apply(0)).lower()


def _check(text: str, node: Any, allowed: frozenset[str]) -> None:
    kind = str(node.nodeName())
    if kind not in _NODES:
        raise ExpressionError(f"{text!r}: {kind} is not allowed in an expression")
    if kind == "UnresolvedFunction":
        name = _function_name(node)
        if name not in allowed:
            raise ExpressionError(f"{text!r}: function {name}() is not allowed")
    for child in _children(node):
        _check(text, child, allowed)


@dataclass(frozen=True)
class _Checked:
    """A parsed, checked and guarded expression: its tree and the Column made of it."""

    tree: Any
    column: Column
    call: Call | None = None
    """The call at its top, for an aggregation (``user_call``)."""


def _checked(text: str, *, aggregates: bool) -> _Checked:
    problem = text_problem(text)
    if problem is not None:
        raise EngineError(problem)
    spark = _session()
    limit = _max_size(os.environ.get("JETSPARK_EXPRESSION_MAX_SIZE"))
    return _checked_in(spark.sparkContext, text, aggregates, limit)


@functools.lru_cache(maxsize=4)
def _max_size(_variable: str | None) -> int:
    """Read once per value of its variable: reading settings costs about 0.7 ms, and an
    epoch checks a stream's expressions some twenty times."""
    return ExpressionLimits().max_size


@functools.lru_cache(maxsize=1024)
def _checked_in(context: SparkContext, text: str, aggregates: bool, limit: int) -> _Checked:
    """Kept per JVM (its ``SparkContext``): a job server meets the same expressions job after
    job, and walking a tree costs a py4j round trip per node and property (the word count's
    five expressions were 290 of its 795 round trips). The trees are immutable and a Column
    made of one belongs to no frame, so sharing them shares nothing a job could change; a
    refused text raises and is not kept."""
    spark = _session()
    tree = _parse(spark, text, aggregates=aggregates, limit=limit)
    return _Checked(tree, _column(spark, tree), _call(spark, tree) if aggregates else None)


def _parse(spark: SparkSession, text: str, *, aggregates: bool, limit: int) -> Any:
    try:
        tree = spark._jsparkSession.sessionState().sqlParser().parseExpression(text)
    except Exception as error:  # py4j hands over Spark's ParseException
        raise EngineError(f"cannot parse {text!r}: {str(error).splitlines()[0]}") from None
    allowed = SCALAR_FUNCTIONS | HIGHER_ORDER_FUNCTIONS
    try:
        _check(text, tree, allowed | AGGREGATE_FUNCTIONS if aggregates else allowed)
    except ExpressionError as error:
        raise EngineError(str(error)) from None
    return _guarded(spark, tree, limit)


def _expression_utils(context: SparkContext) -> Any:
    """Spark's Column <-> Expression factory (its lookup is kept: ``jetspark.jvm_lookups``)."""
    return _jvm_of(context).org.apache.spark.sql.classic.ExpressionUtils


def _column(spark: SparkSession, node: Any) -> Column:
    from pyspark.sql.classic.column import Column as ClassicColumn

    return ClassicColumn(_expression_utils(spark.sparkContext).column(node))


def _node(spark: SparkSession, column: Column) -> Any:
    return _expression_utils(spark.sparkContext).expression(column._jc)


def _guarded(spark: SparkSession, node: Any, limit: int) -> Any:
    """``node`` with the size argument of every size-taking call guarded: past ``limit`` it
    raises instead. The argument is guarded, not the call, so that Spark's constant folding
    of a literal call meets the guard before it could build the value."""
    children = _children(node)
    rebuilt = [_guarded(spark, child, limit) for child in children]
    if str(node.nodeName()) == "UnresolvedFunction":
        name = _function_name(node)
        index = 1 if name == "sequence" else SIZE_ARGUMENT.get(name)
        args = [_column(spark, child) for child in rebuilt]
        if index is not None and index < len(args) == node.arguments().size():
            message = F.lit(f"{name}() would make more than {limit} characters or elements")
            within = F.coalesce(_size(name, args) <= F.lit(limit), F.lit(True))
            guarded = F.when(within, args[index]).otherwise(F.raise_error(message))
            rebuilt[index] = _node(spark, guarded)
    if any(new is not old for new, old in zip(rebuilt, children, strict=True)):
        node = node.withNewChildren(_jvm_of(spark.sparkContext).PythonUtils.toSeq(rebuilt))
    return node


def _size(name: str, args: list[Column]) -> Column:
    """How big the call's result would be, computed before the call runs."""
    if name == "sequence":
        start, stop = args[0].cast("bigint"), args[1].cast("bigint")
        step = args[2].cast("bigint") if len(args) > 2 else F.lit(1)
        return F.abs(stop - start) / F.greatest(F.abs(step), F.lit(1)) + F.lit(1)
    count = args[SIZE_ARGUMENT[name]].cast("bigint")
    if name == "repeat":
        return F.length(args[0].cast("string")) * count
    if name == "array_repeat":
        return F.greatest(F.length(args[0].cast("string")), F.lit(1)) * count
    return count


def user_column(text: str, *, aggregates: bool = False) -> Column:
    """The checked expression ``text`` as a Column; ``EngineError`` naming why if refused."""
    return _checked(text, aggregates=aggregates).column


def user_call(text: str) -> Call | None:
    """The call at the top of the checked aggregation ``text``, if it is one."""
    return _checked(text, aggregates=True).call


def _call(spark: SparkSession, tree: Any) -> Call | None:
    if str(tree.nodeName()) != "UnresolvedFunction" or tree.filter().isDefined():
        return None
    if tree.orderingWithinGroup().size() > 0:
        return None
    arguments = tree.arguments()
    return Call(
        name=_function_name(tree),
        distinct=bool(tree.isDistinct()),
        arguments=[_column(spark, arguments.apply(i)) for i in range(arguments.size())],
    )
