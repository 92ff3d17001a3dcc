"""A custom partitioner the routing tests name as ``python:tests.engine.partitioners:...``."""

from __future__ import annotations


def by_length(key: object) -> int:
    """The pid of a string key is its length; None goes to partition 0."""
    return 0 if key is None else len(str(key))


def logged(key: object) -> int:
    """For keys ``token|side|value``: note when ``side`` was routed, partition by ``value``.

    The note goes to ``<tmp>/jetspark-order-<token>.log`` (one line per key, appended), so a
    test can see which edge Spark routed first.
    """
    import os
    import tempfile
    import time

    from jetspark.dag.partitioning import partition_id

    token, side, value = str(key).split("|", 2)
    path = os.path.join(tempfile.gettempdir(), f"jetspark-order-{token}.log")
    with open(path, "a", encoding="utf-8") as log:
        log.write(f"{side} {time.time_ns()}\n")
    return partition_id(value)
