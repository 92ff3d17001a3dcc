"""Items in and out per vertex, counted inside the JVM while the job's own actions run.

Each routed inbound frame and each vertex's output carries a ``DataFrame.observe`` count: no
extra Spark job is run to count. An observation is read only once its action has finished
(a frame that no action consumed in full reports nothing rather than a partial figure).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F

from worker.engine.contract import VertexCounts


def _finished(observation: Any) -> int | None:
    if observation._jo is None or not observation._jo.future().isCompleted():
        return None
    return int(observation.get.get("n", 0))


class VertexCounters:
    """Attach counts to frames while the plan is built; read them when the job is done."""

    def __init__(self) -> None:
        self._received: dict[str, list[Any]] = defaultdict(list)
        self._emitted: dict[str, Any] = {}

    def received(self, vertex: str, frame: DataFrame) -> DataFrame:
        observation = Observation()
        self._received[vertex].append(observation)
        return frame.observe(observation, F.count(F.lit(1)).alias("n"))

    def emitted(self, vertex: str, frame: DataFrame) -> DataFrame:
        observation = Observation()
        self._emitted[vertex] = observation
        return frame.observe(observation, F.count(F.lit(1)).alias("n"))

    def counts(self) -> dict[str, VertexCounts]:
        result: dict[str, VertexCounts] = {}
        for vertex in self._received.keys() | self._emitted.keys():
            received = [_finished(o) for o in self._received.get(vertex, [])]
            emitted = _finished(self._emitted[vertex]) if vertex in self._emitted else 0
            result[vertex] = VertexCounts(
                items_in=sum(n for n in received if n is not None), items_out=emitted or 0
            )
        return result
