"""Items in and out per vertex, counted inside the JVM while the job's own actions run.

Each vertex's output carries a ``DataFrame.observe`` count: no extra Spark job is run to
count. What a vertex received is derived from its senders' counts (times the copies a
broadcast makes); only an edge that takes part of its sender's output (an ``__ordinal``
column) is observed on its own. Each observation breaks Spark's whole-stage code generation,
so there is one per vertex, not one per frame. An observation is read only once its action
has finished (a frame no action consumed in full reports nothing rather than a part).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F

from worker.engine.contract import VertexCounts


def _finished(observation: Any) -> int | None:
    if observation._jo is None or not observation._jo.future().isCompleted():
        return None
    return int(observation.get.get("n", 0))


def _observed(frame: DataFrame) -> tuple[DataFrame, Any]:
    observation = Observation()
    return frame.observe(observation, F.count(F.lit(1)).alias("n")), observation


@dataclass(frozen=True)
class _Inbound:
    sender: str
    copies: int
    observation: Any = None
    """Set when the edge carries only part of the sender's output."""


class VertexCounters:
    """Attach counts to frames while the plan is built; read them when the job is done."""

    def __init__(self) -> None:
        self._inbound: dict[str, list[_Inbound]] = defaultdict(list)
        self._emitted: dict[str, Any] = {}

    def emitted(self, vertex: str, frame: DataFrame) -> DataFrame:
        """Count what ``vertex`` emits."""
        frame, self._emitted[vertex] = _observed(frame)
        return frame

    def received(
        self, vertex: str, sender: str, frame: DataFrame, *, copies: int, partial: bool
    ) -> DataFrame:
        """Note an inbound edge: ``copies`` per sent item; observed when ``partial``."""
        observation = None
        if partial:
            frame, observation = _observed(frame)
        self._inbound[vertex].append(_Inbound(sender, copies, observation))
        return frame

    def _sent(self, edge: _Inbound) -> int:
        if edge.observation is not None:
            return _finished(edge.observation) or 0
        emitted = self._emitted.get(edge.sender)
        return (_finished(emitted) or 0) if emitted is not None else 0

    def counts(self) -> dict[str, VertexCounts]:
        result: dict[str, VertexCounts] = {}
        for vertex in self._inbound.keys() | self._emitted.keys():
            received = sum(self._sent(e) * e.copies for e in self._inbound.get(vertex, []))
            emitted = self._emitted.get(vertex)
            result[vertex] = VertexCounts(
                items_in=received, items_out=(_finished(emitted) or 0) if emitted else 0
            )
        return result
