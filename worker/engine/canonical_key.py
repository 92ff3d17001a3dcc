"""SPEC §4's ``canonical(key)`` built in Spark Columns, byte for byte as Python makes it.

``jetspark.dag.partitioning.canonical`` hashes an integer or boolean as 8 bytes, a string (or
binary) as its bytes, and anything else as the compact sorted-key JSON ``json.dumps`` writes.
Here that JSON is written by Spark, per the key's type: a double as Python's ``repr`` (the
shortest digits that read back as the same double, from Jackson's Schubfach port of
``Double.toString``, re-laid out as Python lays them out), strings escaped as ``json`` escapes
them, struct fields and map keys sorted by code point. A type Python's ``json`` cannot write
(decimal, date, timestamp, interval...), a struct whose fields clash, or a double inside an
array or map (Spark cannot call Schubfach inside the lambda that writes the elements) has none:
``UnroutableKey`` says so and what to do instead, rather than route by some other bytes.
"""

from __future__ import annotations

import json

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    ByteType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructType,
)

from worker.engine.errors import EngineError

INTEGRAL = (ByteType, ShortType, IntegerType, LongType, BooleanType)
_SHORTEST = "com.fasterxml.jackson.core.io.schubfach.DoubleToDecimal"
"""Shortest round-trip digits of a double (JDK 19's ``Double.toString``; JDK 17's is not)."""
_TINY = 1e-320
"""Below this (subnormals a few ulps wide) one digit may round-trip where Schubfach writes two."""
_ULP_SCALED = "4.9406564584124654"
"""The least subnormal, 2**-1074, times 10**324 (enough digits for k <= 2100 of them)."""
_ESCAPES = {"\\": "\\\\", '"': '\\"'} | {chr(c): json.dumps(chr(c)).strip('"') for c in range(32)}


class UnroutableKey(EngineError):
    """A key whose type has no SPEC §4 canonical bytes."""


def canonical_text(key: Column, key_type: DataType) -> Column:
    """The JSON ``canonical()`` writes for a non-null key that is neither integral nor a string
    (nor binary); ``UnroutableKey`` for a type without one."""
    return _json(key, key_type, top=True)


def _json(value: Column, data_type: DataType, top: bool = False, in_lambda: bool = False) -> Column:
    text = _json_of_value(value, data_type, in_lambda)
    return text if top else F.when(value.isNull(), F.lit("null")).otherwise(text)


def _json_of_value(value: Column, data_type: DataType, in_lambda: bool) -> Column:
    if isinstance(data_type, NullType):
        return F.lit("null")
    if isinstance(data_type, BooleanType):
        return F.when(value, F.lit("true")).otherwise(F.lit("false"))
    if isinstance(data_type, INTEGRAL):
        return value.cast("bigint").cast("string")
    if isinstance(data_type, DoubleType | FloatType):
        if in_lambda:  # an array's or map's elements are written in a lambda
            raise UnroutableKey(
                f"a key holding {data_type.simpleString()}s in an array or map has no "
                "canonical bytes Spark can write (the shortest digits of a double come from a "
                "call Spark cannot make inside a lambda); cast them to string, or partition "
                "this edge with spark_hash"
            )
        return python_float_text(value.cast("double"))  # Python widens a float32 too
    if isinstance(data_type, StringType):
        return json_string(value)
    if isinstance(data_type, ArrayType):
        element = data_type.elementType
        items = F.transform(value, lambda x: _json(x, element, in_lambda=True))
        return F.concat(F.lit("["), F.array_join(items, ","), F.lit("]"))
    if isinstance(data_type, StructType):
        return _struct(value, data_type, in_lambda)
    if isinstance(data_type, MapType) and isinstance(data_type.keyType, StringType):
        entries = F.array_sort(
            F.map_entries(value),
            lambda a, b: F.when(a["key"] < b["key"], -1).when(a["key"] > b["key"], 1).otherwise(0),
        )
        v_type = data_type.valueType
        items = F.transform(
            entries,
            lambda e: F.concat(
                json_string(e["key"]), F.lit(":"), _json(e["value"], v_type, in_lambda=True)
            ),
        )
        return F.concat(F.lit("{"), F.array_join(items, ","), F.lit("}"))
    raise UnroutableKey(
        f"a key of type {data_type.simpleString()} has no canonical bytes (SPEC §4: integers, "
        "booleans, strings, doubles and arrays, structs and string-keyed maps of them); cast "
        "it to string, bigint or double, or partition this edge with spark_hash"
    )


def _struct(value: Column, data_type: StructType, in_lambda: bool) -> Column:
    names = [f.name for f in data_type.fields]
    if len(set(names)) != len(names):
        raise UnroutableKey(
            f"a struct key with fields named twice ({data_type.simpleString()}) has no "
            "canonical JSON object"
        )
    types = {f.name: f.dataType for f in data_type.fields}
    parts: list[Column] = []
    for name in sorted(names):  # json.dumps(sort_keys=True): code point order
        label = json.dumps(name, ensure_ascii=False) + ":"
        if parts:
            label = "," + label
        parts += [F.lit(label), _json(value.getField(name), types[name], in_lambda=in_lambda)]
    return F.concat(F.lit("{"), *parts, F.lit("}"))


def json_string(text: Column) -> Column:
    """A string as ``json.dumps(ensure_ascii=False)`` quotes it."""
    escaped = text
    for raw, written in _ESCAPES.items():  # the backslash first
        escaped = F.replace(escaped, F.lit(raw), F.lit(written))
    special = text.rlike('[\\x00-\\x1f"\\\\]')
    return F.concat(F.lit('"'), F.when(special, escaped).otherwise(text), F.lit('"'))


def python_float_text(value: Column) -> Column:
    """``repr(value)`` of a double (``json.dumps`` writes a float so), ``NaN``/``Infinity``
    included: Schubfach's shortest digits, laid out as Python lays them out."""
    shortest = F.call_function(
        "reflect", F.lit(_SHORTEST), F.lit("toString"), F.coalesce(value, F.lit(0.0))
    )
    written = shortest.cast("string")
    negative = written.startswith("-")
    body = F.regexp_replace(written, "^-", "")
    whole = F.regexp_extract(body, r"^([0-9]+)\.([0-9]+)", 1)
    fraction = F.regexp_extract(body, r"^([0-9]+)\.([0-9]+)", 2)
    exponent = F.when(
        body.contains("E"), F.regexp_extract(body, "E(-?[0-9]+)$", 1).try_cast("int")
    ).otherwise(F.lit(0))
    all_digits = F.concat(whole, fraction)
    stripped = F.regexp_replace(all_digits, "^0+", "")
    digits = F.regexp_replace(stripped, "0+$", "")
    # The decimal point sits after ``point`` of ``digits``: 1.25E3 -> "125", 4.
    point = F.length(whole) + exponent - (F.length(all_digits) - F.length(stripped))
    digits, point = _one_digit_if_tiny(value, digits, point)
    laid_out = _python_layout(digits, point)
    signed = F.concat(F.when(negative, F.lit("-")).otherwise(F.lit("")), laid_out)
    special = body.startswith("N") | body.startswith("I")  # NaN, Infinity, -Infinity
    return F.when(special, written).otherwise(signed)


def _python_layout(digits: Column, point: Column) -> Column:
    """Python's repr of 0.d1d2...dn x 10**point: fixed notation for 1e-4 <= |x| < 1e16."""
    n = F.length(digits)
    exp10 = point - F.lit(1)
    fixed = (
        F.when(
            point <= 0,
            F.concat(F.lit("0."), F.repeat(F.lit("0"), -point), digits),
        )
        .when(
            point >= n,
            F.concat(digits, F.repeat(F.lit("0"), point - n), F.lit(".0")),
        )
        .otherwise(
            F.concat(
                F.call_function("substr", digits, F.lit(1), point),
                F.lit("."),
                F.call_function("substr", digits, point + F.lit(1)),
            )
        )
    )
    mantissa = F.when(
        n > 1,
        F.concat(F.call_function("substr", digits, F.lit(1), F.lit(1)), F.lit("."),
                 F.call_function("substr", digits, F.lit(2))),
    ).otherwise(digits)  # fmt: skip
    scientific = F.concat(
        mantissa,
        F.lit("e"),
        F.when(exp10 < 0, F.lit("-")).otherwise(F.lit("+")),
        F.when(F.abs(exp10) < 10, F.lit("0")).otherwise(F.lit("")),  # two digits at least
        F.abs(exp10).cast("string"),
    )
    text = F.when((exp10 >= -4) & (exp10 < 16), fixed).otherwise(scientific)
    return F.when(digits == F.lit(""), F.lit("0.0")).otherwise(text)


def _one_digit_if_tiny(value: Column, digits: Column, point: Column) -> tuple[Column, Column]:
    """Schubfach writes at least two digits (4.9E-324); Python one when one reads back the
    same, which can only happen a few ulps above zero. There the value is exactly
    k x 2**-1074: the nearest one-digit decimal is found exactly, and kept if it reads back."""
    magnitude = F.abs(value)
    tiny = (magnitude < F.lit(_TINY)) & (magnitude > F.lit(0.0)) & (F.length(digits) > 1)
    # Every step stays in range for any double (0 stands in for one that is not tiny).
    small = F.when(magnitude < F.lit(_TINY), magnitude).otherwise(F.lit(0.0))
    k = (small * F.lit(2.0**537) * F.lit(2.0**537)).cast("decimal(10,0)")
    scaled = k * F.lit(_ULP_SCALED).cast("decimal(17,16)")  # |value| x 10**324, < 10**4
    # the 10-power of the leading digit, scaled
    shift = F.least(F.greatest(point - F.lit(1) + F.lit(324), F.lit(0)), F.lit(4))
    unit = F.pow(F.lit(10.0), shift).cast("decimal(10,0)")
    nearest = F.round(scaled / unit, 0).cast("int")  # 1..10
    one = F.when(nearest == 10, F.lit("1")).otherwise(nearest.cast("string"))
    one_point = F.when(nearest == 10, point + F.lit(1)).otherwise(point)
    candidate = F.concat(one, F.lit("e"), (one_point - F.lit(1)).cast("string"))
    reads_back = candidate.try_cast("double") == magnitude
    use = F.coalesce(tiny & reads_back, F.lit(False))
    return F.when(use, one).otherwise(digits), F.when(use, one_point).otherwise(point)
