"""The Java source Spark's whole-stage code generation writes for a frame's plan."""

from __future__ import annotations

from pyspark.sql import DataFrame


def generated_code(frame: DataFrame) -> list[str]:
    """Each code-generated stage's source, in plan order (what Janino would compile)."""
    plan = frame._jdf.queryExecution().executedPlan()
    jvm = frame.sparkSession._jvm
    assert jvm is not None
    stages = jvm.org.apache.spark.sql.execution.debug.package.codegenStringSeq(plan)
    return [str(stages.apply(i)._2()) for i in range(stages.size())]
