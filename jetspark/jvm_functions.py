"""Spark SQL functions looked up in the JVM once per JVM, not on every call.

PySpark's ``F.col``, ``F.lit``, ``F.sum``... each ask the JVM for Spark's ``functions`` class
and then for the named method: two py4j round trips before the call itself. A job's or an
epoch's plan builds hundreds of Columns, so those lookups were a third of the driver's time
spent building them (``F.col`` 0.99 ms against 0.28 ms with the lookup kept, measured in
one session). The method found is a static JVM method bound to the gateway, not to a
thread or a session, so it is kept per JVM view and reused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyspark.sql.functions.builtin as builtin

_KEPT: dict[tuple[object, str], Callable[..., Any]] = {}
"""By (JVM view, name): the key holds the view, so a later view is never taken for it."""


def keep_function_lookups() -> None:
    """Make PySpark's function lookup (``_get_jvm_function``) keep what it finds. Idempotent;
    a PySpark without that private helper is left as it is."""
    original = getattr(builtin, "_get_jvm_function", None)
    if original is None or getattr(original, "jetspark_kept", False):
        return

    def looked_up(name: str, sc: Any) -> Callable[..., Any]:
        key = (sc._jvm, name)
        found = _KEPT.get(key)
        if found is None:
            found = _KEPT[key] = original(name, sc)
        return found

    looked_up.jetspark_kept = True  # type: ignore[attr-defined]
    builtin._get_jvm_function = looked_up
