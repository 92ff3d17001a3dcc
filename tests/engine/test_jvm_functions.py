"""Spark SQL functions are looked up in the JVM once (``jetspark.jvm_functions``): the kept
method is the one PySpark would find, and it builds the same Columns on any thread."""

from __future__ import annotations

import threading

import pyspark.sql.functions.builtin as builtin
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from jetspark.jvm_functions import keep_function_lookups

pytestmark = pytest.mark.spark


def test_a_function_is_looked_up_once_and_kept(spark: SparkSession) -> None:
    keep_function_lookups()  # again: it keeps the first wrapper, not one around another
    lookup = builtin._get_jvm_function
    assert getattr(lookup, "jetspark_kept", False)
    context = spark.sparkContext
    assert lookup("floor", context) is lookup("floor", context)
    assert lookup("floor", context) is not lookup("ceil", context)


def test_kept_functions_build_the_same_columns_on_another_thread(spark: SparkSession) -> None:
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
