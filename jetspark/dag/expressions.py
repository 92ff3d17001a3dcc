"""The expression allow-list: Spark SQL scalar expressions, parsed with sqlglot's Spark dialect.

Only functions named here may be called; ``reflect``, ``java_method`` and anything unknown are
refused by name. Statements, subqueries and table references are refused too.
"""

from __future__ import annotations

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
    exp.Lambda,
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


def check_expression(expression: str, *, allow_aggregates: bool = False) -> None:
    """Raise ``ExpressionError`` unless ``expression`` is one allowed scalar expression."""
    try:
        parsed = sqlglot.parse(expression, read="spark")
    except ParseError as error:
        reason = error.errors[0]["description"] if error.errors else str(error)
        raise ExpressionError(f"cannot parse {expression!r}: {reason}") from None
    except Exception as error:  # sqlglot raises a few other error types on odd input
        raise ExpressionError(f"cannot parse {expression!r}: {error}") from None
    if len(parsed) != 1 or parsed[0] is None:
        raise ExpressionError(f"{expression!r} must be exactly one expression")
    tree = parsed[0]
    for node in tree.walk():
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
            continue
        if isinstance(node, exp.Func) and not isinstance(node, exp.Binary | exp.Unary):
            if isinstance(node, exp.Cast | exp.TryCast | exp.Case | exp.If | exp.Paren):
                continue
            if not _spark_name_allowed(node, SCALAR_FUNCTIONS):
                raise ExpressionError(
                    f"{expression!r}: function {_function_name(node)}() is not allowed"
                )
