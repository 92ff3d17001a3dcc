"""What a plan node output, counted by Spark while it ran the node: the node's SQL metric
"number of output rows", read from Spark's SQL status store once the query that ran it has
ended.

Spark keeps that count for its operators anyway. An observation (``observed.py``) is a plan
node of its own: it breaks code generation and evaluates its aggregates row by row, so a
``flat_map`` counted by the size of each item's array evaluated the array a second time
(a README word count's lines: half a second of its 2.3). The ``Generate`` node's own count
costs nothing while Spark runs.

A node is told by its output attribute's expression id, unique in a session, which its
description in the query's plan graph names in its output list (``OUTPUTS``):
``Generate explode(...), false, [word#881]``, ``FileScan text [line#4] Batched: ...``.
Queries started before the counter was made are not read (they cannot have run the node).
The first finished query that ran the node gives its count, as an observation gives the
first run of its frame.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from worker.engine import spark_status

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ROWS = "number of output rows"

OUTPUTS: dict[str, Callable[[str], str]] = {
    "Generate": lambda desc: desc.rpartition("[")[2],  # after what it reads
    "Scan text": lambda desc: desc.partition("]")[0],  # a leaf: its first list
}
"""The nodes counted, and where each one's description lists the attributes it makes (an id
elsewhere in it is one it reads)."""

Node = tuple[str, str, int | None]
"""A plan-graph node: its name, its description, the rows it output (None: no such metric)."""


class QueryNodes:
    """The counted nodes (``OUTPUTS``) of the queries Spark ran since this reader was made,
    each finished query read once (its plan graph, one py4j call, with the metric values it
    was stored with), found by id: a busy worker's other jobs may run many queries meanwhile.

    Spark records a query's end on its listener thread, then aggregates its metrics on its
    status store's own thread and stores them with the query: a query is finished here once
    they are stored (``SQLExecutionUIData.metricValues``)."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.after = spark_status.stores(spark).newest_id()
        """Every query up to this one is read, gone from Spark's store or not the job's."""
        self.finished: dict[int, list[Node]] = {}
        self.running: dict[int, list[Node]] = {}
        """Queries not finished when last looked at: their nodes, without counts yet."""
        self.counted: list[NodeRows] = []
        self._lock = threading.Lock()

    def settle(self, timeout_s: float = spark_status.SETTLE_S) -> None:
        """Wait (at most ``timeout_s``) until every query that ran a counted node has
        finished: first for Spark's listeners, then for its store's metrics."""
        stores = spark_status.stores(self.spark)
        deadline = time.monotonic() + timeout_s
        stores.settle(timeout_s)
        while time.monotonic() < deadline and self._pending():
            time.sleep(0.005)

    def _pending(self) -> bool:
        """Whether a counted node is in a query still running and in none finished (Spark's
        queries read once for all of them)."""
        finished, running = self.nodes()
        return any(c.count_in(finished) is None and c.runs_in(running) for c in self.counted)

    def nodes(self) -> tuple[list[list[Node]], list[list[Node]]]:
        """The finished queries' counted nodes, oldest first, and the running ones'. The
        job's thread and its live metrics' thread both ask: one at a time."""
        with self._lock:
            stores = spark_status.stores(self.spark)
            settled = True
            for execution_id in range(self.after + 1, stores.newest_id() + 1):
                if execution_id not in self.finished:
                    settled &= self._look(stores, execution_id)
                if settled:  # no need to look at it again (read, or evicted from the store)
                    self.after = execution_id
            return (
                [self.finished[e] for e in sorted(self.finished)],
                [self.running[e] for e in sorted(self.running)],
            )

    def _look(self, stores: spark_status.Stores, execution_id: int) -> bool:
        """Read the query if it has finished; False while it is still running."""
        found = stores.sql.execution(execution_id)
        if not found.isDefined():
            return True  # evicted from Spark's store: nothing to read
        execution = found.get()
        values = execution.metricValues()
        if values is None or not execution.completionTime().isDefined():
            if execution_id not in self.running:
                self.running[execution_id] = _nodes(stores, execution_id, None)
            return False
        self.running.pop(execution_id, None)
        self.finished[execution_id] = _nodes(stores, execution_id, values)
        return True


def _nodes(stores: spark_status.Stores, execution_id: int, values: Any) -> list[Node]:
    """The counted nodes of a query's plan graph, with their counts from ``values`` (a
    finished query's metric values by accumulator id; None: not known yet)."""
    graph = stores.read(stores.sql.planGraph(execution_id))
    metrics = {} if values is None else {str(k): str(v) for k, v in stores.read(values).items()}
    found: list[Node] = []
    pending = list(graph.get("nodes", []))
    while pending:
        node = pending.pop()
        pending.extend(node.get("nodes") or [])  # a code-generated cluster's members
        name = str(node.get("name", "")).strip()
        if name not in OUTPUTS:
            continue
        rows = None
        for metric in node.get("metrics") or []:
            if metric.get("name") == ROWS:
                digits = metrics.get(str(metric.get("accumulatorId")), "").replace(",", "")
                rows = int(digits) if digits.isdigit() else rows
        found.append((name, str(node.get("desc", "")), rows))
    return found


class NodeRows:
    """The rows output by the plan node named ``node`` (one of ``OUTPUTS``) that makes the
    attribute of ``column`` in ``frame``."""

    def __init__(self, queries: QueryNodes, node: str, frame: DataFrame, column: str) -> None:
        java: Any = frame._jdf  # py4j
        attribute = java.queryExecution().analyzed().output().apply(frame.columns.index(column))
        self.queries, self.node, self._outputs = queries, node, OUTPUTS[node]
        self._made = re.compile(rf"#{int(attribute.exprId().id())}(?!\d)")
        queries.counted.append(self)

    def _is_it(self, name: str, desc: str) -> bool:
        return name == self.node and self._made.search(self._outputs(desc)) is not None

    def value(self) -> int | None:
        """The rows, once a query that ran the node has finished (None until then)."""
        return self.count_in(self.queries.nodes()[0])

    def count_in(self, finished: list[list[Node]]) -> int | None:
        """The rows, from the first of ``finished`` (queries' nodes) that ran the node."""
        for nodes in finished:
            for name, desc, rows in nodes:
                if rows is not None and self._is_it(name, desc):
                    return rows
        return None

    def runs_in(self, running: list[list[Node]]) -> bool:
        """Whether one of ``running`` (queries' nodes) runs the node."""
        return any(self._is_it(name, desc) for nodes in running for name, desc, _ in nodes)
