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

The Column tree stays linear in the size of the key's type: a value used more than once is
bound once (``worker.engine.let``) rather than repeated, and the ``reflect`` calls that give
doubles their digits are made first, outside every lambda, then bound with the key.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

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
from worker.engine.let import let, let_all

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


Path = tuple[str, ...]
"""Struct field names from the key down to a value outside any array or map."""


@dataclass(frozen=True)
class _Doubles:
    """The JSON of each double of the key outside arrays and maps, by its path: written all
    at once, from digits computed before any lambda (Spark evaluates no ``reflect`` inside
    one)."""

    texts: Column | None = None
    index: Mapping[Path, int] = field(default_factory=dict)

    def text(self, path: Path) -> Column:
        assert self.texts is not None, path
        return self.texts.getItem(self.index[path])


def canonical_text(key: Column, key_type: DataType) -> Column:
    """The JSON ``canonical()`` writes for a non-null key that is neither integral nor a string
    (nor binary); ``UnroutableKey`` for a type without one.

    The tree is linear in the size of ``key_type``: each struct is bound once (``let``) and
    its fields read from the variable, and the doubles are written by one lambda over all."""
    paths = list(_double_paths(key_type, ()))
    if not paths:
        return _json_of_value(key, key_type, _Doubles(), ())
    doubles = [_field_at(key, path).cast("double") for path in paths]  # Python widens a float32
    digits = F.array(*[F.struct(d.alias("value"), _shortest(d).alias("written")) for d in doubles])
    texts = F.transform(digits, lambda d: python_float_text(d["value"], d["written"]))
    index = {path: i for i, path in enumerate(paths)}
    return let_all(
        {"key": key, "texts": texts},
        lambda bound: _json_of_value(bound["key"], key_type, _Doubles(bound["texts"], index), ()),
    )


def _double_paths(data_type: DataType, path: Path) -> Iterator[Path]:
    """The paths of the key's doubles (and floats) outside arrays and maps."""
    if isinstance(data_type, DoubleType | FloatType):
        yield path
    elif isinstance(data_type, StructType):
        for name, field_type in _fields(data_type):
            yield from _double_paths(field_type, (*path, name))


def _field_at(value: Column, path: Path) -> Column:
    for name in path:
        value = value.getField(name)
    return value


def _json(value: Column, data_type: DataType, doubles: _Doubles, path: Path | None) -> Column:
    """``value``'s JSON, ``null`` included; ``value`` is a variable or a field of one, cheap
    to write twice."""
    text = _json_of_value(value, data_type, doubles, path)
    return F.when(value.isNull(), F.lit("null")).otherwise(text)


def _json_of_value(
    value: Column, data_type: DataType, doubles: _Doubles, path: Path | None
) -> Column:
    """``path`` is None inside an array or map (whose elements are written in a lambda)."""
    if isinstance(data_type, NullType):
        return F.lit("null")
    if isinstance(data_type, BooleanType):
        return F.when(value, F.lit("true")).otherwise(F.lit("false"))
    if isinstance(data_type, INTEGRAL):
        return value.cast("bigint").cast("string")
    if isinstance(data_type, DoubleType | FloatType):
        if path is None:
            raise UnroutableKey(
                f"a key holding {data_type.simpleString()}s in an array or map has no "
                "canonical bytes Spark can write (the shortest digits of a double come from a "
                "call Spark cannot make inside a lambda); cast them to string, or partition "
                "this edge with spark_hash"
            )
        return doubles.text(path)
    if isinstance(data_type, StringType):
        return json_string(value)
    if isinstance(data_type, ArrayType):
        element = data_type.elementType
        items = F.transform(value, lambda x: _json(x, element, doubles, None))
        return F.concat(F.lit("["), F.array_join(items, ","), F.lit("]"))
    if isinstance(data_type, StructType):
        fields = _fields(data_type)
        return let(value, lambda bound: _struct(bound, fields, doubles, path))
    if isinstance(data_type, MapType) and isinstance(data_type.keyType, StringType):
        entries = F.array_sort(
            F.map_entries(value),
            lambda a, b: F.when(a["key"] < b["key"], -1).when(a["key"] > b["key"], 1).otherwise(0),
        )
        v_type = data_type.valueType
        items = F.transform(
            entries,
            lambda e: F.concat(
                json_string(e["key"]), F.lit(":"), _json(e["value"], v_type, doubles, None)
            ),
        )
        return F.concat(F.lit("{"), F.array_join(items, ","), F.lit("}"))
    raise UnroutableKey(
        f"a key of type {data_type.simpleString()} has no canonical bytes (SPEC §4: integers, "
        "booleans, strings, doubles and arrays, structs and string-keyed maps of them); cast "
        "it to string, bigint or double, or partition this edge with spark_hash"
    )


def _fields(data_type: StructType) -> list[tuple[str, DataType]]:
    """A struct's fields in ``json.dumps(sort_keys=True)`` order (code points)."""
    names = [f.name for f in data_type.fields]
    if len(set(names)) != len(names):
        raise UnroutableKey(
            f"a struct key with fields named twice ({data_type.simpleString()}) has no "
            "canonical JSON object"
        )
    return sorted((f.name, f.dataType) for f in data_type.fields)


def _struct(
    value: Column, fields: list[tuple[str, DataType]], doubles: _Doubles, path: Path | None
) -> Column:
    parts: list[Column] = []
    for name, field_type in fields:
        label = json.dumps(name, ensure_ascii=False) + ":"
        if parts:
            label = "," + label
        inner = None if path is None else (*path, name)
        parts += [F.lit(label), _json(value.getField(name), field_type, doubles, inner)]
    return F.concat(F.lit("{"), *parts, F.lit("}"))


def json_string(text: Column) -> Column:
    """A string as ``json.dumps(ensure_ascii=False)`` quotes it."""
    escaped = text
    for raw, written in _ESCAPES.items():  # the backslash first
        escaped = F.replace(escaped, F.lit(raw), F.lit(written))
    special = text.rlike('[\\x00-\\x1f"\\\\]')
    return F.concat(F.lit('"'), F.when(special, escaped).otherwise(text), F.lit('"'))


def _shortest(value: Column) -> Column:
    """Schubfach's shortest digits of a double, as Java writes them (``1.0E7``, ``NaN``)."""
    digits = F.call_function(
        "reflect", F.lit(_SHORTEST), F.lit("toString"), F.coalesce(value, F.lit(0.0))
    )
    return digits.cast("string")


def python_float_text(value: Column, written: Column) -> Column:
    """``repr(value)`` of a double (``json.dumps`` writes a float so), ``NaN``/``Infinity``
    included, from ``written``, Schubfach's digits of it (``_shortest``, computed outside any
    lambda), laid out as Python lays them out. Both are read several times: pass variables."""
    negative = written.startswith("-")
    special = written.rlike("^-?[NI]")  # NaN, Infinity, -Infinity
    number = r"^-?([0-9]+)\.([0-9]+)"
    parts = {
        "whole": F.regexp_extract(written, number, 1),
        "fraction": F.regexp_extract(written, number, 2),
        "exponent": F.coalesce(
            F.regexp_extract(written, "E(-?[0-9]+)$", 1).try_cast("int"), F.lit(0)
        ),
    }
    laid_out = let_all(parts, lambda p: _digits_and_point(value, p))
    signed = F.concat(F.when(negative, F.lit("-")).otherwise(F.lit("")), laid_out)
    return F.when(special, written).otherwise(signed)


def _digits_and_point(value: Column, parts: Column) -> Column:
    """Python's layout of the number Schubfach wrote as ``whole.fraction E exponent``."""
    whole, fraction, exponent = parts["whole"], parts["fraction"], parts["exponent"]
    stripped = F.regexp_replace(F.concat(whole, fraction), "^0+", "")

    def digits_and_point(s: Column) -> Column:
        leading_zeros = F.length(whole) + F.length(fraction) - F.length(s)
        # The decimal point sits after ``point`` of ``digits``: 1.25E3 -> "125", 4.
        return F.struct(
            F.regexp_replace(s, "0+$", "").alias("digits"),
            (F.length(whole) + exponent - leading_zeros).alias("point"),
        )

    found = let(stripped, digits_and_point)
    return let(
        found,
        lambda d: let(
            _one_digit_if_tiny(value, d["digits"], d["point"]),
            lambda t: _python_layout(t["digits"], t["point"]),
        ),
    )


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


def _one_digit_if_tiny(value: Column, digits: Column, point: Column) -> Column:
    """Schubfach writes at least two digits (4.9E-324); Python one when one reads back the
    same, which can only happen a few ulps above zero. There the value is exactly
    k x 2**-1074: the nearest one-digit decimal is found exactly, and kept if it reads back.
    The struct of the ``digits`` and ``point`` to lay out."""
    magnitude = F.abs(value)
    # Every step stays in range for any double (0 stands in for one that is not tiny).
    small = F.when(magnitude < F.lit(_TINY), magnitude).otherwise(F.lit(0.0))
    k = (small * F.lit(2.0**537) * F.lit(2.0**537)).cast("decimal(10,0)")
    scaled = k * F.lit(_ULP_SCALED).cast("decimal(17,16)")  # |value| x 10**324, < 10**4
    # the 10-power of the leading digit, scaled
    shift = F.least(F.greatest(point - F.lit(1) + F.lit(324), F.lit(0)), F.lit(4))
    unit = F.pow(F.lit(10.0), shift).cast("decimal(10,0)")
    nearest = F.round(scaled / unit, 0).cast("int")  # 1..10

    def one_digit(n: Column) -> Column:
        return F.struct(
            F.when(n == 10, F.lit("1")).otherwise(n.cast("string")).alias("digits"),
            F.when(n == 10, point + F.lit(1)).otherwise(point).alias("point"),
        )

    def chosen(one: Column) -> Column:
        tiny = (magnitude < F.lit(_TINY)) & (magnitude > F.lit(0.0)) & (F.length(digits) > 1)
        candidate = F.concat(one["digits"], F.lit("e"), (one["point"] - F.lit(1)).cast("string"))
        use = F.coalesce(tiny & (candidate.try_cast("double") == magnitude), F.lit(False))
        return F.when(use, one).otherwise(F.struct(digits.alias("digits"), point.alias("point")))

    return let(let(nearest, one_digit), chosen)
