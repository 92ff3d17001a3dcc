"""SPEC §4 in the JVM for every key type: the bytes Spark hashes are ``canonical()``'s, item by
item (floats as Python writes them, arrays, structs, maps, nested, unicode), and an item
keyed so is routed where ``partition_id`` says; a type without canonical bytes fails clearly."""

from __future__ import annotations

import itertools
import math
import random
import struct
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    DoubleType,
    FloatType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from jetspark.dag.partitioning import canonical, partition_id, partitioned_target
from tests.engine.conftest import RunDag, job_body
from worker.engine.canonical_key import UnroutableKey, canonical_text
from worker.engine.routing import murmur3_pid
from worker.engine.runner import VertexFailed

pytestmark = pytest.mark.spark

SPECIAL_DOUBLES = [
    1.0e7, 0.1, -0.0, 0.0, 1.0, -1.5, 1e16, 1e15, 9999999999999998.0, 1e-4, 1e-5, 0.00012,
    123456789.125, 2.82879384806159e17, 1e23, 1e22, 5e-324, 1e-323, 2.5e-323,
    1.7976931348623157e308,
    2.2250738585072014e-308, 2.225073858507201e-308, 1.0000000000000002, 0.30000000000000004,
    1e21, 1e-7, 123e-20, float("nan"), float("inf"), float("-inf"), 100.0, 12345678.9,
]  # fmt: skip


def _doubles() -> list[float]:
    draw = random.Random(13)
    values = list(SPECIAL_DOUBLES)
    values += [k * 5e-324 for k in range(1, 2200)]  # where one digit may read back
    values += [10.0**e for e in range(-323, 309)]
    values += [math.nextafter(10.0**e, math.inf) for e in range(-300, 300, 7)]
    values += [math.nextafter(10.0**e, -math.inf) for e in range(-300, 300, 7)]
    for _ in range(20_000):  # every bit pattern is a double: all exponents, all digit counts
        (value,) = struct.unpack("<d", draw.getrandbits(64).to_bytes(8, "little"))
        values.append(value)
    values += [draw.uniform(-1e6, 1e6) for _ in range(2000)]
    values += [round(draw.uniform(0, 1000), draw.randrange(0, 6)) for _ in range(2000)]
    return values


def _bytes_and_pids(frame: DataFrame, column: str = "k") -> list[tuple[Any, bytes | None, int]]:
    """(the key as Python collects it, the bytes Spark hashed, the pid Spark computed)."""
    data_type = frame.schema[column].dataType
    key = F.col(column)
    plain = isinstance(data_type, StringType | BinaryType)
    text = key if plain else canonical_text(key, data_type)
    rows = frame.select(
        key.alias("k"),
        F.when(key.isNull(), None).otherwise(text.cast("binary")).alias("text"),
        murmur3_pid(key, data_type, 271).alias("pid"),
    ).collect()
    out = []
    for row in rows:
        value = row["k"]
        value = value.asDict(recursive=True) if hasattr(value, "asDict") else value
        if isinstance(value, list):
            value = [v.asDict(recursive=True) if hasattr(v, "asDict") else v for v in value]
        raw = None if row["text"] is None else bytes(row["text"])
        out.append((value, raw, row["pid"]))
    return out


def _padded(raw: bytes) -> bytes:
    return raw + b"\0" * (-len(raw) % 4)


def _assert_canonical(found: list[tuple[Any, bytes | None, int]]) -> None:
    wrong = [
        (value, raw, canonical(value))
        for value, raw, _ in found
        if value is not None and _padded(raw or b"") != canonical(value)
    ]
    assert not wrong, wrong[:10]
    pids = [(value, pid) for value, _, pid in found if pid != partition_id(value, 271)]
    assert not pids, pids[:10]


def test_doubles_hash_as_python_writes_them(spark: SparkSession) -> None:
    values = _doubles()
    frame = spark.createDataFrame(
        [(v,) for v in values], StructType([StructField("k", DoubleType())])
    )
    found = _bytes_and_pids(frame)
    assert len(found) == len(values)
    _assert_canonical(found)
    by_value = {repr(v): raw for v, raw, _ in found}
    assert by_value["10000000.0"] == b"10000000.0"  # not Java's 1.0E7
    assert by_value["2.82879384806159e+17"] == b"2.82879384806159e+17"  # JDK 17 adds 008
    assert by_value["5e-324"] == b"5e-324"  # not Schubfach's 4.9E-324
    assert by_value["nan"] == b"NaN" and by_value["-inf"] == b"-Infinity"


def test_floats_hash_as_the_double_python_collects(spark: SparkSession) -> None:
    values = [0.1, 1e7, 3.4e38, 1e-45, -2.5, 16777217.0, float("nan")]
    frame = spark.createDataFrame(
        [(v,) for v in values], StructType([StructField("k", FloatType())])
    )
    _assert_canonical(_bytes_and_pids(frame))


STRINGS = ["a", "", 'say "hi"', "back\\slash", "tab\there", "nl\n", "\x00\x01\x1f\x7f",
           "héllo", "日本語", "🙂x", "\u2028\u2029", "\b\f\r", "\\u0041"]  # fmt: skip


def test_nested_values_hash_as_sorted_compact_json(spark: SparkSession) -> None:
    inner = StructType([StructField("zeta", DoubleType()), StructField("Ä", StringType()),
                        StructField("a b", ArrayType(LongType()))])  # fmt: skip
    listed = StructType([StructField("s", StringType()), StructField("n", LongType())])
    schema = StructType(
        [
            StructField("arr", ArrayType(StringType())),
            StructField("rec", StructType([StructField("y", DoubleType()),
                                           StructField("x", inner),
                                           StructField("b", ArrayType(listed))])),
            StructField("m", MapType(StringType(), ArrayType(LongType()))),
        ]
    )  # fmt: skip
    rows = []
    for i, text in enumerate(STRINGS):
        record = {"zeta": 1e7 * i, "Ä": text, "a b": [i, None, -i]}
        rows.append(
            (
                [text, None, STRINGS[-1 - i]] if i % 3 else [],
                {"y": 1e-5 * i, "x": record if i % 4 else None,
                 "b": [{"s": text, "n": i}, {"s": None, "n": None}]},
                {text: [2**40, -7], "é": None, "Z": []},
            )
        )  # fmt: skip
    frame = spark.createDataFrame(rows, schema)
    for column in ("arr", "rec", "m"):
        _assert_canonical(_bytes_and_pids(frame, column))
    mixed = spark.range(3).select(
        F.struct(F.col("id").alias("n"), (F.col("id") % 2 == 0).alias("even"),
                 F.lit(None).alias("nothing"), F.array(F.col("id")).alias("ids")).alias("k")
    )  # fmt: skip
    _assert_canonical(_bytes_and_pids(mixed))


def test_strings_and_binaries_hash_as_their_bytes(spark: SparkSession) -> None:
    frame = spark.createDataFrame(
        [(s, bytearray(s.encode())) for s in STRINGS], "s string, b binary"
    )
    for column in ("s", "b"):
        for value, _, pid in _bytes_and_pids(frame, column):
            assert pid == partition_id(bytes(value) if column == "b" else value, 271)


@pytest.mark.parametrize(
    "expression",
    ["cast(1.5 as decimal(10, 2))", "current_date()", "timestamp_millis(0)",
     "map(1, 'a')", "named_struct('a', 1, 'a', 2)", "array(1.5D)", "map('a', array(0.5F))",
     "array(named_struct('f', 1.5D))"],
)  # fmt: skip
def test_a_type_without_canonical_bytes_is_refused(spark: SparkSession, expression: str) -> None:
    frame = spark.range(1).select(F.expr(expression).alias("k"))
    with pytest.raises(UnroutableKey, match="canonical"):
        murmur3_pid(F.col("k"), frame.schema["k"].dataType, 271)


def _chain(depth: int) -> DataType:
    """Structs in structs, each level with a double and an array of structs."""
    listed = StructType([StructField("s", StringType()), StructField("i", ArrayType(LongType()))])
    data_type: DataType = StructType(
        [
            StructField("n", LongType()),
            StructField("f", DoubleType()),
            StructField("s", StringType()),
        ]
    )
    for _ in range(depth):
        data_type = StructType([StructField("a", data_type), StructField("f", DoubleType()),
                                StructField("l", ArrayType(listed))])  # fmt: skip
    return data_type


def _alternating(depth: int) -> DataType:
    """Arrays of structs of arrays of structs..., a double beside them at the top."""
    data_type: DataType = StructType(
        [StructField("n", LongType()), StructField("s", StringType()),
         StructField("m", MapType(StringType(), ArrayType(LongType())))]
    )  # fmt: skip
    for level in range(depth):
        if level % 2:
            data_type = ArrayType(data_type)
        else:
            data_type = StructType([StructField("a", data_type), StructField("w", StringType())])
    return StructType([StructField("x", data_type), StructField("f", DoubleType())])


def _value_of(data_type: DataType, draw: random.Random) -> Any:
    """A random value of ``data_type``, nulls included."""
    if draw.random() < 0.1:
        return None
    if isinstance(data_type, LongType):
        return draw.randrange(-(2**40), 2**40)
    if isinstance(data_type, DoubleType):
        return draw.choice([*SPECIAL_DOUBLES, draw.uniform(-1e9, 1e9)])
    if isinstance(data_type, StringType):
        return draw.choice(STRINGS)
    if isinstance(data_type, ArrayType):
        return [_value_of(data_type.elementType, draw) for _ in range(draw.randrange(3))]
    if isinstance(data_type, MapType):
        return {draw.choice(STRINGS): _value_of(data_type.valueType, draw) for _ in range(2)}
    assert isinstance(data_type, StructType)
    return {f.name: _value_of(f.dataType, draw) for f in data_type.fields}


@pytest.mark.parametrize("shape", [_chain, _alternating])
def test_deeply_nested_keys_hash_as_canonical_item_by_item(spark: SparkSession, shape: Any) -> None:
    data_type = shape(8)
    draw = random.Random(8)
    rows = [(_value_of(data_type, draw) or {},) for _ in range(60)]
    frame = spark.createDataFrame(rows, StructType([StructField("k", data_type)]))
    found = _bytes_and_pids(frame)
    assert len(found) == len(rows)
    _assert_canonical(found)


@pytest.mark.parametrize("shape", [_chain, _alternating])
def test_the_routing_expression_grows_linearly_with_nesting(
    spark: SparkSession, shape: Any
) -> None:
    """Each value used more than once is bound once: two more levels of nesting add about the
    same to the expression whatever the depth (a repeated child would double it each time)."""
    sizes = [len(str(murmur3_pid(F.col("k"), shape(depth), 271))) for depth in range(0, 9, 2)]
    steps = [after - before for before, after in itertools.pairwise(sizes)]
    assert min(steps) > 0 and max(steps) <= 1.5 * min(steps), sizes
    assert sizes[0] < 20_000, sizes  # a double's layout is written once, not per use


MEMBERS = 2
ITEMS = [{"i": i, "f": [1e7, 0.1, -0.0, 1e16, 2.5e-8][i % 5] * (i + 1), "w": STRINGS[i % 13]}
         for i in range(60)]  # fmt: skip


@pytest.mark.parametrize("distributed", [False, True])
@pytest.mark.parametrize(
    "key",
    ["f", "array(w, w)", "named_struct('w', w, 'f', f)", "array(named_struct('i', i))",
     "named_struct('a', named_struct('b', array(named_struct('c', array(w), 'i', i))), 'f', f)"],
)  # fmt: skip
def test_items_keyed_by_floats_arrays_structs_reach_their_formula_processor(
    run_dag: RunDag, distributed: bool, key: str
) -> None:
    body = job_body(
        [
            {"name": "src", "processor": "source.items", "local_parallelism": 2,
             "params": {"items": ITEMS}},
            {"name": "probe", "processor": "map", "local_parallelism": 3,
             "params": {"select": {"i": "i", "key": key, "pid": "spark_partition_id()"}}},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "src", "to": "probe", "routing": "partitioned", "key": key,
          "distributed": distributed},
         {"from": "probe", "to": "out"}],
        members=MEMBERS,
    )  # fmt: skip
    outcome, _ = run_dag(body)
    rows = outcome.results["out"]
    assert len(rows) == len(ITEMS)
    for row in rows:
        expected = partitioned_target(
            partition_id(row["key"], 271),
            distributed=distributed,
            member=(row["i"] % (MEMBERS * 2)) // 2,
            parallelism=MEMBERS * 3,
            local_parallelism=3,
        )
        assert row["pid"] == expected, row


def test_a_job_keyed_by_a_decimal_fails_naming_why(run_dag: RunDag) -> None:
    body = job_body(
        [
            {"name": "src", "processor": "source.items", "params": {"items": ITEMS[:3]}},
            {"name": "sink", "processor": "sink.results", "local_parallelism": 2},
        ],
        [{"from": "src", "to": "sink", "routing": "partitioned", "key": "i * 1.5"}],
    )  # fmt: skip
    with pytest.raises(VertexFailed, match=r"UnroutableKey: a key of type decimal"):
        run_dag(body)
