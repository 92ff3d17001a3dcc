"""A ``python:module:function`` partitioner: the function maps an edge's key to a pid.

Only the key column crosses into Python (a pandas UDF), and only on the edge that names the
partitioner; the rows themselves stay in the JVM. The module must be allowed by configuration
(``JETSPARK_DAG_ALLOWED_PYTHON_MODULES``) and importable on the workers: nothing is uploaded.
"""

from __future__ import annotations

import importlib
import math
import warnings
from collections.abc import Callable
from typing import Any

from pyspark.sql import Column
from pyspark.sql.pandas.functions import pandas_udf
from pyspark.util import PythonEvalType

from jetspark.settings import DagLimits

Partitioner = Callable[[Any], int]


class PartitionerNotAllowed(ValueError):
    """The partitioner's module is not in the allowed Python modules."""


def load_partitioner(spec: str, allowed: list[str] | None = None) -> Partitioner:
    """Import ``function`` from ``module`` of ``python:module:function`` if it is allowed."""
    module_name, _, function_name = spec.removeprefix("python:").partition(":")
    allowed = DagLimits().allowed_python_modules if allowed is None else allowed
    if not any(module_name == a or module_name.startswith(a + ".") for a in allowed):
        raise PartitionerNotAllowed(f"module {module_name!r} is not in the allowed Python modules")
    function: Partitioner = getattr(importlib.import_module(module_name), function_name)
    return function


def _plain(value: Any) -> Any:
    """pandas hands nulls over as None or NaN; the function sees None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def python_pid(key: Column, spec: str, partition_count: int) -> Column:
    """A column of ``function(key) % partition_count``, computed on the executors."""
    allowed = DagLimits().allowed_python_modules  # the driver's configuration decides
    load_partitioner(spec, allowed)  # refuse a disallowed module before any task runs

    def pids(keys: Any) -> Any:  # a pandas Series in, a pandas Series out
        import pandas  # type: ignore[import-untyped]

        function = load_partitioner(spec, allowed)
        values = keys.astype(object).tolist()
        return pandas.Series([int(function(_plain(v))) % partition_count for v in values])

    # Declared by eval type: the function's hints are deliberately not pandas types here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        udf: Any = pandas_udf(pids, "int", PythonEvalType.SQL_SCALAR_PANDAS_UDF)
    column: Column = udf(key)
    return column
