"""Aggregates Spark computes while it runs a frame for another reason (``DataFrame.observe``).

An epoch needs a few numbers about its items that are in no output: how many items each
vertex sent, how many each processor dropped as late, each processor's greatest timestamp.
A Spark job of their own costs a fixed 0.1-0.3 s per epoch on two cores; observed, they
come with the job that computes the frame anyway.

An observation is a row-at-a-time operator that breaks Spark's whole-stage code generation:
over a million items, each costs about as much as the rest of their pipeline's projections.
So aggregates asked for on a frame that is itself an observed frame not yet computed (a
source's count, then its receiver's watermark tops over the same items) are observed
together, by one operator that names both vertices (``work_names``).
"""

from __future__ import annotations

import threading
import uuid
import weakref
from collections.abc import Mapping
from typing import Any

from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F

from worker.engine.work_names import observation_name


class _Observation:
    """One ``DataFrame.observe`` of ``source``: every aggregate stacked on it, by unique name."""

    def __init__(
        self, source: DataFrame, aggregates: dict[str, Column], vertices: tuple[str | None, ...]
    ) -> None:
        self.source, self.aggregates, self.vertices = source, aggregates, vertices
        self.members: list[weakref.ref[ObservedAggregates]] = []
        """Who reads it (weakly: a reader gone has no use for it)."""
        self.observation = Observation(observation_name(*vertices))
        named = [value.alias(name) for name, value in aggregates.items()]
        self.frame = source.observe(self.observation, *named)

    def reported(self) -> bool:
        java: Any = self.observation._jo  # py4j
        return java is not None and bool(java.future().isCompleted())

    def row(self) -> dict[str, Any] | None:
        """The values once the frame ran; None before, or when the action that ran ran a
        plan Spark had pruned the observation from (an empty row)."""
        java: Any = self.observation._jo  # py4j
        if not self.reported() or java.getRow().length() == 0:
            return None
        return self.observation.get


_stacked: weakref.WeakKeyDictionary[DataFrame, weakref.ref[_Observation]] = (
    weakref.WeakKeyDictionary()
)
"""Each observed frame made here, with the observation on top of it (while both live:
neither is kept alive by this)."""
_stacking = threading.Lock()


class ObservedAggregates:
    """Named integer aggregates (``F.sum``, ``F.max``, ...) over a frame's rows, filled when
    Spark first computes ``frame``.

    ``observed`` never waits: it answers only once that computation has finished (a frame no
    action consumed in full reports nothing rather than a part). ``values`` always answers,
    computing ``frame`` by a job of its own when Spark has not yet (a frame kept, i.e.
    persisted, by then is computed once for both).
    """

    def __init__(
        self,
        frame: DataFrame,
        aggregates: Mapping[str, Column],
        *,
        vertex: str | None = None,
        stack: bool = True,
    ) -> None:
        """``vertex``: whose Spark work ``frame`` is (its pipeline is told by this name).
        ``stack``: observed in the same operator as ``frame``'s own observation, when it is
        an observed frame not yet computed."""
        self._source, self._aggregates, self._vertex = frame, dict(aggregates), vertex
        tag = uuid.uuid4().hex[:8]
        self._names = {name: f"{tag}_{name}" for name in aggregates}
        mine = {self._names[name]: value for name, value in aggregates.items()}
        with _stacking:  # jobs build their plans on threads of their own
            found = _stacked.get(frame) if stack else None
        below = found() if found is not None else None
        if below is not None and not below.reported():
            self._group = _Observation(
                below.source, {**below.aggregates, **mine}, (*below.vertices, vertex)
            )
            for ref in below.members:
                if (member := ref()) is not None:
                    member._group = self._group
                    self._group.members.append(ref)
        else:
            self._group = _Observation(frame, mine, (vertex,))
        self._group.members.append(weakref.ref(self))
        with _stacking:
            _stacked[self._group.frame] = weakref.ref(self._group)
        self.frame = self._group.frame
        """The frame to compute in place of the source: computing it fills the aggregates."""
        self._values: dict[str, int | None] | None = None

    def observed(self) -> dict[str, int | None] | None:
        """Each aggregate (None over no rows, as Spark's) once ``frame`` ran, else None."""
        if self._values is None:
            row = self._group.row()
            if row is not None:
                self._values = self._ints({n: row.get(self._names[n]) for n in self._aggregates})
        return self._values

    def values(self) -> dict[str, int | None]:
        """Each aggregate; a job of its own only if ``frame`` has not run in full."""
        if self.observed() is None and not self._group.reported():
            _compute(self._group.frame)
        if self.observed() is None:  # an action ran a plan without the observation in it
            again = ObservedAggregates(
                self._source, self._aggregates, vertex=self._vertex, stack=False
            )
            _compute(again.frame)
            self._values = again.observed() or self._ints({})  # still pruned: no rows
        assert self._values is not None
        return self._values

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
