"""Spark's status stores as the engine and the worker read them: the SQL store (queries, their
plan graphs and metric values) and the application's (stages), through py4j, each object read
whole as JSON by Spark's own status-store serializer."""

from __future__ import annotations

import functools
import gzip
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SETTLE_S = 2.0
"""How long a reader waits for Spark's listeners to record what has already run."""


@dataclass(frozen=True)
class Stores:
    """Spark's status stores and its status-store serializer, as py4j handles."""

    sql: Any
    app: Any
    serializer: Any
    listener_bus: Any

    def read(self, value: Any) -> Any:
        """A status-store object (a plan graph, a stage, metric values) as JSON."""
        data = bytes(self.serializer.serialize(value))
        return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)

    def newest_id(self, count: int | None = None) -> int:
        """The newest query id in Spark's store (-1: none yet); ``count``: its size, if
        known."""
        count = int(self.sql.executionsCount()) if count is None else count
        return (
            -1 if count == 0 else int(self.sql.executionsList(count - 1, 1).apply(0).executionId())
        )

    def settle(self, timeout_s: float = SETTLE_S) -> bool:
        """Wait until Spark's listeners have handled every event posted so far (a query's
        end is recorded on their thread, after the action returned; its metrics are then
        aggregated on the store's own thread: ``node_rows``); False when they were still busy
        after ``timeout_s``."""
        try:
            self.listener_bus.waitUntilEmpty(int(timeout_s * 1000))
        except Exception:  # py4j's TimeoutException: read what is recorded
            return False
        return True


@functools.lru_cache(maxsize=4)
def stores(spark: SparkSession) -> Stores:
    """Asked of the JVM once per session (each JVM name resolved costs round trips)."""
    jvm: Any = spark.sparkContext._jvm
    context: Any = spark.sparkContext._jsc.sc()
    return Stores(
        sql=spark._jsparkSession.sharedState().statusStore(),
        app=context.statusStore(),
        serializer=jvm.org.apache.spark.status.KVUtils.KVStoreScalaSerializer(),
        listener_bus=context.listenerBus(),
    )
