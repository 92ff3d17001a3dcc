"""Values that change every epoch, put into a plan as data rather than as code.

Spark's whole-stage code generation writes a number literal into the Java source it compiles
(``Literal.doGenCode``), so an epoch's plan that differs from the last one only in a
watermark or a range's first item is compiled again by Janino: about ten classes an epoch of
``bench.streaming``'s DAG, ~10 ms each (Spark's ``CodegenMetrics``). An array literal is
handed to the compiled code as a reference instead, and an element looked up by a column of
the row is not folded back into a number: the code is the same every epoch, and Spark's
code cache serves it.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F


def looked_up(values: Sequence[int | None], index: Column) -> Column:
    """``values[index]`` as a ``bigint`` per row (0-based; NULL past the end or where the
    value is None), the values out of the generated code."""
    return F.get(F.lit(list(values)).cast("array<bigint>"), index)
