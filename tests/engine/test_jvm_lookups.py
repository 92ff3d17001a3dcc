"""JVM classes and static methods are looked up once (``jetspark.jvm_lookups``): what is
kept is what py4j would find, a field is read each time, and the kept methods build the
same Columns on any thread."""

from __future__ import annotations

import threading

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jetspark.jvm_lookups import keep_jvm_lookups

pytestmark = pytest.mark.spark


def test_a_class_and_its_static_method_are_looked_up_once(spark: SparkSession) -> None:
    keep_jvm_lookups()  # again: it keeps the first wrapper, not one around another
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    functions = getattr(jvm, "org.apache.spark.sql.functions")
    assert getattr(jvm, "org.apache.spark.sql.functions") is functions
    assert functions.floor is functions.floor
    assert functions.floor is not functions.ceil
    assert jvm.java.lang.Math.abs(-3) == 3  # a package path, its class, a static method


def test_a_static_field_is_read_each_time_not_kept(spark: SparkSession) -> None:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    integer = jvm.java.lang.Integer
    assert integer.MAX_VALUE == 2**31 - 1
    assert "MAX_VALUE" not in vars(integer)


def test_a_name_that_is_not_there_still_fails(spark: SparkSession) -> None:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    with pytest.raises(Exception, match="does not exist"):
        jvm.java.lang.Math.noSuchMethodHere  # noqa: B018
    with pytest.raises(Exception, match="does not exist"):  # again: a failure is not kept
        jvm.java.lang.Math.noSuchMethodHere  # noqa: B018


def test_kept_lookups_build_the_same_columns_on_another_thread(spark: SparkSession) -> None:
    def rows() -> list[tuple[int, int, float]]:
        frame = spark.range(5).select(
            F.floor(F.col("id") / F.lit(2)).alias("half"),
            (F.col("id") * F.lit(3)).alias("triple"),
            F.sqrt(F.col("id")).alias("root"),
        )
        return [tuple(row) for row in frame.orderBy("triple").collect()]

    expected = [(i // 2, i * 3, i**0.5) for i in range(5)]
    assert rows() == expected
    seen: list[list[tuple[int, int, float]]] = []
    thread = threading.Thread(target=lambda: seen.append(rows()))
    thread.start()
    thread.join(timeout=120)
    assert seen == [expected]
