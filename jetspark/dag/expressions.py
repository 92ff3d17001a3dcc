"""The expression allow-list: Spark SQL scalar expressions, parsed with sqlglot's Spark dialect.

Only functions named here may be called; ``reflect``, ``java_method`` and anything unknown are
refused by name. Statements, subqueries and table references are refused too. The worker
checks the tree Spark's own parser makes of the same text against these same names
(``worker.engine.expressions``): what runs is what was checked. Text that parsers may read
differently (comments, ``${`` substitutions) is refused before either parser sees it.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

SCALAR_FUNCTIONS = frozenset(
    """
    abs acos asin atan atan2 bround cbrt ceil ceiling cos cosh degrees e exp expm1 floor
    greatest least ln log log10 log1p log2 mod negative pi pmod positive pow power radians
    rand randn rint round sign signum sin sinh sqrt tan tanh
    ascii base64 btrim char char_length character_length chr concat concat_ws contains
    decode encode endswith format_number format_string initcap instr lcase left length
    levenshtein locate lower lpad ltrim octet_length overlay position regexp_extract
    regexp_extract_all regexp_like regexp_replace repeat replace reverse right rlike rpad rtrim
    soundex space split split_part startswith substr substring substring_index translate trim
    ucase unbase64 upper
    add_months current_date current_timestamp date_add date_format date_sub date_trunc
    datediff day dayofmonth dayofweek dayofyear from_unixtime from_utc_timestamp hour
    last_day minute month months_between next_day now quarter second timestamp_millis
    timestamp_seconds to_date to_timestamp to_unix_timestamp to_utc_timestamp trunc
    unix_millis unix_seconds unix_timestamp weekofyear year make_date make_timestamp
    coalesce if ifnull isnan isnotnull isnull nanvl nullif nvl nvl2 when case
    array array_contains array_distinct array_except array_intersect array_join array_max
    array_min array_position array_remove array_repeat array_sort array_union arrays_zip
    element_at flatten sequence shuffle size slice sort_array
    map map_keys map_values named_struct struct get_json_object json_tuple to_json
    crc32 hash md5 sha sha1 sha2 xxhash64 murmur3
    cast try_cast int bigint double float string boolean date timestamp decimal
    spark_partition_id monotonically_increasing_id
    """.split()
)

HIGHER_ORDER_FUNCTIONS = frozenset(
    """
    transform filter exists forall aggregate reduce zip_with map_filter map_zip_with
    transform_keys transform_values
    """.split()
)
"""Functions taking lambdas; a lambda's body is checked against the same allow-list."""

SIZE_ARGUMENT = {"repeat": 1, "space": 0, "lpad": 1, "rpad": 1, "array_repeat": 1}
"""Functions whose output grows with one argument (by its index): bounded by
``DagLimits.max_expression_size`` when literal here, by a guard at run time otherwise.
``sequence`` is bounded by its range (see ``sequence_size``)."""

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""What a field or alias name the user chooses must look like."""

_UNSAFE_TEXT = (
    ("${", "variable substitution (${...})"),
    ("--", "a comment (--)"),
    ("/*", "a comment (/*)"),
    ("*/", "a comment (*/)"),
    ("\x00", "a NUL"),
)


def quote_identifier(name: str) -> str:
    """``name`` as one Spark SQL identifier: the one place identifiers are quoted."""
    return "`" + name.replace("`", "``") + "`"


def text_problem(expression: str) -> str | None:
    """Why the text itself is refused (before any parser reads it), or None."""
    for needle, what in _UNSAFE_TEXT:
        if needle in expression:
            return f"{expression!r}: {what} is not allowed in an expression"
    return None


AGGREGATE_FUNCTIONS = frozenset(
    """
    count sum avg mean min max first last collect_list collect_set approx_count_distinct
    count_distinct stddev stddev_pop stddev_samp variance var_pop var_samp any_value
    bool_and bool_or every some
    """.split()
)

_STATEMENTS = (
    exp.Select,
    exp.Subquery,
    exp.Table,
    exp.Create,
    exp.Command,
    exp.Insert,
    exp.Drop,
    exp.Set,
)


class ExpressionError(ValueError):
    """An expression that is not allowed, with the reason."""


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return str(node.sql_name()).lower()


def _spark_name_allowed(node: exp.Func, allowed: frozenset[str]) -> bool:
    # sqlglot names some functions its own way (split -> RegexpSplit): also ask how the Spark
    # dialect writes the call back out, which is the name Spark itself will resolve.
    spark_name = node.sql(dialect="spark").split("(", 1)[0].strip().lower()
    names = {_function_name(node), type(node).__name__.lower(), spark_name}
    names |= {n.lower() for n in getattr(type(node), "_sql_names", ())}
    return bool(names & allowed)


def check_expression(
    expression: str, *, allow_aggregates: bool = False, max_size: int | None = None
) -> None:
    """Raise ``ExpressionError`` unless ``expression`` is one allowed scalar expression.

    ``max_size`` bounds the literal size arguments of ``SIZE_ARGUMENT`` functions and
    ``sequence`` (None: no bound checked here)."""
    problem = text_problem(expression)
    if problem is not None:
        raise ExpressionError(problem)
    try:
        parsed = sqlglot.parse(expression, read="spark")
    except ParseError as error:
        reason = error.errors[0]["description"] if error.errors else str(error)
        raise ExpressionError(f"cannot parse {expression!r}: {reason}") from None
    except Exception as error:  # sqlglot raises a few other error types on odd input
        raise ExpressionError(f"cannot parse {expression!r}: {error}") from None
    if len(parsed) != 1 or parsed[0] is None:
        raise ExpressionError(f"{expression!r} must be exactly one expression")
    for node in parsed[0].walk():
        _check_node(expression, node, allow_aggregates=allow_aggregates, max_size=max_size)


def _check_node(
    expression: str, node: exp.Expr, *, allow_aggregates: bool, max_size: int | None
) -> None:
    if isinstance(node, _STATEMENTS):
        raise ExpressionError(
            f"{expression!r}: {type(node).__name__.lower()} is not allowed in an expression"
        )
    if isinstance(node, exp.AggFunc) or (
        isinstance(node, exp.Func) and _spark_name_allowed(node, AGGREGATE_FUNCTIONS)
    ):
        if not allow_aggregates:
            raise ExpressionError(
                f"{expression!r}: aggregate function {_function_name(node)}() "
                "is only allowed in aggregations"
            )
        return
    if isinstance(node, exp.Func) and not isinstance(node, exp.Binary | exp.Unary):
        if isinstance(node, exp.Cast | exp.TryCast | exp.Case | exp.If | exp.Paren):
            return
        if not _spark_name_allowed(node, SCALAR_FUNCTIONS | HIGHER_ORDER_FUNCTIONS):
            raise ExpressionError(
                f"{expression!r}: function {_function_name(node)}() is not allowed"
            )
        if max_size is not None:
            _check_literal_size(expression, node, max_size)


def _literal_int(node: exp.Expression | None) -> int | None:
    if isinstance(node, exp.Neg):
        inner = _literal_int(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return int(str(node.this))
        except ValueError:
            return None
    return None


def _arguments(node: exp.Func) -> list[exp.Expression]:
    return [v for v in node.args.values() if isinstance(v, exp.Expression)] + list(node.expressions)


def sequence_size(start: int, stop: int, step: int | None) -> int:
    """How many elements ``sequence(start, stop, step)`` makes (0 when it cannot)."""
    step = step if step is not None else (1 if stop >= start else -1)
    if step == 0:
        return 0
    return max(0, (stop - start) // step + 1)


def _check_literal_size(expression: str, node: exp.Func, max_size: int) -> None:
    names = {_function_name(node), node.sql(dialect="spark").split("(", 1)[0].strip().lower()}
    for name in names & (SIZE_ARGUMENT.keys() | {"sequence"}):
        spark_args = _spark_arguments(node)
        if name == "sequence":
            ints = [_literal_int(a) for a in spark_args[:3]]
            if len(ints) >= 2 and ints[0] is not None and ints[1] is not None:
                size = sequence_size(ints[0], ints[1], ints[2] if len(ints) > 2 else None)
                if size > max_size:
                    raise ExpressionError(
                        f"{expression!r}: sequence() of {size} elements; at most {max_size}"
                    )
            continue
        index = SIZE_ARGUMENT[name]
        value = _literal_int(spark_args[index]) if index < len(spark_args) else None
        if value is not None and value > max_size:
            raise ExpressionError(f"{expression!r}: {name}() of size {value}; at most {max_size}")


def _spark_arguments(node: exp.Func) -> list[exp.Expression]:
    """A call's arguments in Spark's order: read back from the Spark SQL sqlglot writes."""
    rewritten = sqlglot.parse_one(node.sql(dialect="spark"), read="spark")
    if isinstance(rewritten, exp.Anonymous):
        return list(rewritten.expressions)
    return _arguments(rewritten) if isinstance(rewritten, exp.Func) else []
