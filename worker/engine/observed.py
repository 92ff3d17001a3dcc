"""Aggregates Spark computes while it runs a frame for another reason (``DataFrame.observe``).

An epoch needs a few numbers about its items that are in no output: how many items each
vertex sent, how many each processor dropped as late, each processor's greatest timestamp.
A Spark job of their own costs a fixed 0.1-0.3 s per epoch on two cores; observed, they
come with the job that computes the frame anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F

from worker.engine.work_names import observation_name


class ObservedAggregates:
    """Named integer aggregates (``F.sum``, ``F.max``, ...) over a frame's rows, filled when
    Spark first computes ``frame``.

    ``observed`` never waits: it answers only once that computation has finished (a frame no
    action consumed in full reports nothing rather than a part). ``values`` always answers,
    computing ``frame`` by a job of its own when Spark has not yet (a frame kept, i.e.
    persisted, by then is computed once for both).
    """

    def __init__(
        self, frame: DataFrame, aggregates: Mapping[str, Column], *, vertex: str | None = None
    ) -> None:
        """``vertex``: whose Spark work ``frame`` is (its pipeline is told by this name)."""
        self._source, self._aggregates, self._vertex = frame, dict(aggregates), vertex
        self._observation = Observation(observation_name(vertex))
        named = [value.alias(name) for name, value in aggregates.items()]
        self.frame = frame.observe(self._observation, *named)
        """The frame to compute in place of the source: computing it fills the aggregates."""
        self._values: dict[str, int | None] | None = None

    def observed(self) -> dict[str, int | None] | None:
        """Each aggregate (None over no rows, as Spark's) once ``frame`` ran, else None."""
        java: Any = self._observation._jo  # py4j
        # An empty row: the action ran a plan Spark had pruned the observation from.
        if self._values is None and self._reported() and java.getRow().length() > 0:
            self._values = self._ints(self._observation.get)
        return self._values

    def values(self) -> dict[str, int | None]:
        """Each aggregate; a job of its own only if ``frame`` has not run in full."""
        if self.observed() is None and not self._reported():
            _compute(self.frame)
        if self.observed() is None:  # an action ran a plan without the observation in it
            again = ObservedAggregates(self._source, self._aggregates, vertex=self._vertex)
            _compute(again.frame)
            self._values = again.observed() or self._ints({})  # still pruned: no rows
        assert self._values is not None
        return self._values

    def _reported(self) -> bool:
        java = self._observation._jo  # py4j
        return java is not None and bool(java.future().isCompleted())

    def _ints(self, row: dict[str, Any]) -> dict[str, int | None]:
        return {
            name: None if row.get(name) is None else int(row[name]) for name in self._aggregates
        }


def count_rows(frame: DataFrame, *, vertex: str | None = None) -> int:
    """``frame.count()`` in one Spark stage: the rows are counted as they are computed,
    where ``count()`` adds a second stage that sums the partitions' counts on one."""
    counted = ObservedAggregates(frame, {"n": F.sum(F.lit(1))}, vertex=vertex)
    return counted.values()["n"] or 0


def _compute(frame: DataFrame) -> None:
    """Run ``frame`` in full and drop its rows: a write to nowhere is one Spark stage, and
    unlike an aggregate it lets the observed aggregates read where a row is
    (``spark_partition_id``)."""
    frame.write.format("noop").mode("overwrite").save()
