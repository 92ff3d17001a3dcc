"""Items in and out per vertex, counted inside the JVM while the job's own actions run.

Each vertex's output carries a ``DataFrame.observe`` count: no extra Spark job is run to
count. What a vertex received is derived from its senders' counts (times the copies a
broadcast makes); only an edge that takes part of its sender's output (an ``__ordinal``
column) is observed on its own. Each observation breaks Spark's whole-stage code generation,
so there is one per vertex, not one per frame, and none on the items an aggregation consumes:

- a vertex with one outbound edge is counted where that edge is read (``at_receiver``): the
  same rows, and a receiver that ``counts_own_input`` (an aggregate) counts them itself,
  adding ``count(1) AS ITEMS`` to its groups and observing the sum on the groups (a few rows,
  after Spark's partial aggregation) instead of every item on its way in, and, in the same
  observation, its groups: what it emits;
- otherwise (a fork, which is persisted anyway, or a dead end) the output is observed;
- a batch vertex whose items Spark counts anyway (``Op.rows_counted_by``: a ``flat_map``'s
  ``Generate``) is not observed: its count is that node's own metric (``node_rows``), read
  once the query that ran it has ended;
- a vertex that knows what it emits per item received (``Op.emitted_per_item``: a
  ``flat_map``'s array size in an epoch) is counted on its input instead, over fewer rows,
  in the same observation as its sender when that sender is counted where its edge is read;
- a vertex that emits one item per item received (``Op.preserves_count``: ``map``,
  ``sort``, a ``combine`` over ``pregrouped`` partials) and has no exchange before it
  emits what it received: not observed.

A batch vertex whose count the driver knows before Spark runs (``source.items``, and an op
that emits one item per item received from such senders, as ``map``) is not observed at all:
every observation is a plan node Spark analyses and a result it sends back, a fifth of a tiny
job's driver time. Known counts are reported once the job's actions have run (``settle``),
as observed ones are.

An observation is read only once its action has finished (a frame no action consumed in full
reports nothing rather than a part).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from worker.engine.contract import VertexCounts
from worker.engine.node_rows import NodeRows, QueryNodes
from worker.engine.observed import ObservedAggregates

ITEMS = "__jetspark_items"
"""The per-group item count an op that counts its own input aggregates."""


@dataclass(frozen=True)
class _Count:
    """One aggregate of an observation: a count."""

    observation: ObservedAggregates
    name: str = "n"


def _finished(count: _Count | NodeRows | None) -> int:
    if isinstance(count, NodeRows):
        return count.value() or 0
    observed = count.observation.observed() if count is not None else None
    return (observed[count.name] or 0) if count is not None and observed is not None else 0


def _observed(
    frame: DataFrame, vertex: str, per_row: Column | None = None
) -> tuple[DataFrame, _Count]:
    """``frame`` (``vertex``'s work) counting its rows (or summing ``per_row``) as Spark
    computes it."""
    observation = ObservedAggregates(
        frame, {"n": F.sum(F.lit(1) if per_row is None else per_row)}, vertex=vertex
    )
    return observation.frame, _Count(observation)


def _observed_two(
    frame: DataFrame, vertex: str, per_row: Column, name: str, other: Column
) -> tuple[DataFrame, _Count, _Count]:
    """``frame`` (``vertex``'s work) summing ``per_row`` and, as ``name``, ``other`` over its
    rows, in one observation: two counts for one operator that breaks code generation."""
    observation = ObservedAggregates(
        frame, {"n": F.sum(per_row), name: F.sum(other)}, vertex=vertex
    )
    return observation.frame, _Count(observation), _Count(observation, name)


def items_column() -> Column:
    """What an op that counts its own input aggregates per group, named ``ITEMS``."""
    return F.count(F.lit(1)).alias(ITEMS)


@dataclass(frozen=True)
class _Inbound:
    sender: str
    copies: int
    observation: _Count | None = None
    """Set when the edge carries only part of the sender's output."""


class VertexCounters:
    """Attach counts to frames while the plan is built; read them when the job is done."""

    def __init__(self) -> None:
        self._inbound: dict[str, list[_Inbound]] = defaultdict(list)
        self._emitted: dict[str, _Count | NodeRows] = {}
        self._queries: QueryNodes | None = None
        """Spark's queries since the first count read from a plan node was asked for."""
        self._at_receiver: set[str] = set()
        self._own_input: dict[str, str] = {}
        """Receiver -> the sender whose items it counts itself."""
        self._known: dict[str, int] = {}
        """Vertices whose emitted count the driver knew before Spark ran them."""
        self._as_received: set[str] = set()
        """Vertices that emit one item per item received (``emitted``'s ``as_received``)."""
        self._settled = False

    def emitted(
        self,
        vertex: str,
        frame: DataFrame,
        *,
        at_receiver: bool = False,
        known: int | None = None,
        rows: NodeRows | None = None,
        as_received: bool = False,
    ) -> DataFrame:
        """Count what ``vertex`` emits, or (``at_receiver``: its one edge takes all of it)
        leave the count to where that edge is read; ``known``: the count, known already;
        ``rows``: the count Spark keeps of the node that makes its items; ``as_received``:
        one item per item received, so what it received. A vertex counted on its input
        (``received``'s ``emits``, ``own_input_counter``) is left as it is."""
        if vertex in self._emitted:
            return frame
        if known is not None:
            self._known[vertex] = known
            return frame
        if rows is not None:
            self._emitted[vertex] = rows
            return frame
        if as_received:
            self._as_received.add(vertex)
            return frame
        if at_receiver:
            self._at_receiver.add(vertex)
            return frame
        frame, self._emitted[vertex] = _observed(frame, vertex)
        return frame

    def received(
        self,
        vertex: str,
        sender: str,
        frame: DataFrame,
        *,
        copies: int,
        partial: bool,
        counts_own_input: bool = False,
        emits: Callable[[DataFrame], Column | None] | None = None,
    ) -> DataFrame:
        """Note an inbound edge: ``copies`` per sent item; observed when ``partial``, or
        counted here for a sender that left it to the receiver (by the receiver's op itself
        when it ``counts_own_input``: see ``own_input_counter``).

        ``emits`` (the receiver's one inbound edge): what the receiver emits per received
        item (``Op.emitted_per_item``), or None; when known, the receiver's count is
        observed here, on its input, in the sender's observation if there is one.
        """
        observation = None  # on the sender's frame, before the edge routes it: its work
        per_item = emits(frame) if emits is not None and not partial and copies == 1 else None
        if partial:
            frame, observation = _observed(frame, sender)
        elif sender in self._at_receiver:
            self._at_receiver.discard(sender)
            if counts_own_input and copies == 1:
                self._own_input[vertex] = sender
            elif per_item is not None:
                frame, self._emitted[sender], self._emitted[vertex] = _observed_two(
                    frame, sender, F.lit(1), "emits", per_item
                )
                per_item = None
            else:
                frame, self._emitted[sender] = _observed(frame, sender)
        if per_item is not None:
            frame, self._emitted[vertex] = _observed(frame, vertex, per_item)
        self._inbound[vertex].append(_Inbound(sender, copies, observation))
        return frame

    def own_input_counter(self, vertex: str) -> Callable[[DataFrame], DataFrame] | None:
        """For a receiver that counts its own input: observe the sum of ``ITEMS`` over its
        groups (and drop the column), and the groups, which are what it emits, in the same
        observation; None when its input is counted otherwise."""
        sender = self._own_input.get(vertex)
        if sender is None:
            return None

        def count(groups: DataFrame) -> DataFrame:
            groups, self._emitted[sender], self._emitted[vertex] = _observed_two(
                groups, vertex, F.col(ITEMS), "groups", F.lit(1)
            )
            return groups.drop(ITEMS)

        return count

    def known_received(self, vertex: str) -> int | None:
        """What ``vertex`` receives, when every inbound edge carries a known count."""
        inbound = self._inbound.get(vertex, [])
        if not inbound or any(e.observation is not None or e.sender not in self._known
                              for e in inbound):  # fmt: skip
            return None
        return sum(self._known[e.sender] * e.copies for e in inbound)

    def node_rows(self, spark: SparkSession, frame: DataFrame, node: str, column: str) -> NodeRows:
        """The count Spark keeps of the plan node ``node`` that makes ``frame``'s ``column``
        (to pass to ``emitted``)."""
        if self._queries is None:  # before the node's frame can have run: it exists now
            self._queries = QueryNodes(spark)
        return NodeRows(self._queries, node, frame, column)

    def settle(self) -> None:
        """The job's actions have run: known counts are reported from now on, and the
        counts read from plan nodes once Spark has recorded the queries that ran them."""
        self._settled = True
        if self._queries is not None:
            self._queries.settle()

    def _emitted_count(self, vertex: str) -> int:
        if vertex in self._known:
            return self._known[vertex] if self._settled else 0
        if vertex in self._as_received:
            return self._received_count(vertex)
        return _finished(self._emitted.get(vertex))

    def _received_count(self, vertex: str) -> int:
        return sum(self._sent(e) * e.copies for e in self._inbound.get(vertex, []))

    def _sent(self, edge: _Inbound) -> int:
        if edge.observation is not None:
            return _finished(edge.observation)
        return self._emitted_count(edge.sender)

    def counts(self) -> dict[str, VertexCounts]:
        result: dict[str, VertexCounts] = {}
        vertices = self._inbound.keys() | self._emitted.keys() | self._known.keys()
        for vertex in vertices | self._at_receiver | self._as_received:
            result[vertex] = VertexCounts(
                items_in=self._received_count(vertex), items_out=self._emitted_count(vertex)
            )
        return result
