"""A job's finished Spark queries read back as pipelines: which vertices each one ran, in
which stage, for how much task time (Spark's own metrics, from its status stores).

Spark fuses the operators between two exchanges into one stage, run task by task: the
vertices whose work is in those operators share the stage's time, as Flink's chained
operators share their task's. A query's SQL plan graph (``SQLAppStatusStore.planGraph``) is cut
at its exchanges (and at cached frames, which are computed where they are first read) into
pipelines; a pipeline's vertices are named by its observations and, for the query's last
pipeline, by the vertex that ran the action (``worker/engine/work_names.py``); its stage is
the one its metrics were measured in (Spark writes ``(stage N.M: task K)`` beside each
timing and size). The stage's task run time, task count and times come from
``AppStatusStore.lastStageAttempt``.

Read on the job's metrics thread, never on the engine's: a handful of py4j calls per
finished query, each object read whole as JSON by Spark's own status-store serializer.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog

from worker.engine import spark_status
from worker.engine.spark_status import SETTLE_S, Stores
from worker.engine.work_names import described_vertex, observed_vertices

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger("jetspark.worker")

_STAGE = re.compile(r"\(stage (\d+)\.\d+: task \d+\)")
_READ_SIDE = ("records read", "fetch", "remote", "local", "merged", "corrupt")
"""An exchange's metrics measured where its output is read (the pipeline above it)."""
_WRITE_SIDE = ("shuffle write time", "shuffle bytes written", "shuffle records written",
               "data size")  # fmt: skip
_CUTS = ("Exchange", "BroadcastExchange", "InMemoryTableScan")
"""Nodes whose input was computed in another stage (or, cached, another query)."""
COUNTED_KEPT = 10_000
"""Stage ids remembered as read (a long stream runs stages without end)."""
_RUNNING = ("ACTIVE", "PENDING")
"""Stage statuses that are not an end (a stage that never ran ends SKIPPED)."""
LOOKBACK = 64
"""Queries listed per poll at most (older new ones are missed)."""


@dataclass(frozen=True)
class PipelineRun:
    """One pipeline of one finished query: the vertices it ran and its stage's figures."""

    vertices: frozenset[str]
    stage: int
    run_ms: int
    """The stage's task run time, summed over its tasks."""
    tasks: int
    started_ms: int
    ended_ms: int
    query_ended_ms: int
    """When the query's last stage ended: the pipelines below it waited until then."""


@dataclass
class _Pipeline:
    nodes: list[dict[str, Any]]
    stages: set[int]
    vertices: set[str]
    depth: int
    """How many pipelines are above it (0: the query's last)."""
    feeds: int | None
    """The first node of the pipeline it feeds."""


def _flatten(nodes: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for node in nodes:
        if "nodes" in node:  # a WholeStageCodegen cluster: its metrics are its own
            found.append({**node, "nodes": None})
            found.extend(_flatten(node["nodes"]))
        else:
            found.append(node)
    return found


def _stage_of(value: str | None) -> int | None:
    found = _STAGE.search(value or "")
    return int(found.group(1)) if found else None


class _PlanGraph:
    """A query's SQL plan graph (nodes by id; each node's parent: the one it feeds)."""

    def __init__(self, graph: dict[str, Any]) -> None:
        self.nodes = {n["id"]: n for n in _flatten(graph.get("nodes", []))}
        self.parent = {edge["fromId"]: edge["toId"] for edge in graph.get("edges", [])}
        for node in graph.get("nodes", []):  # a codegen cluster goes with its members
            if node.get("nodes"):
                self.parent[node["id"]] = node["nodes"][0]["id"]
        self.first: dict[int, int] = {}

    def is_cut(self, node_id: int) -> bool:
        return str(self.nodes.get(node_id, {}).get("name", "")).startswith(_CUTS)

    def root(self, node_id: int) -> int:
        """The first node of ``node_id``'s pipeline (the one right below a cut, or the top);
        iterative: a big DAG's plan is deeper than Python's recursion limit."""
        path = []
        current = node_id
        while current not in self.first:
            above = self.parent.get(current)
            if above is None or self.is_cut(above):
                self.first[current] = current
                break
            path.append(current)
            current = above
        for node in path:
            self.first[node] = self.first[current]
        return self.first[current]

    def depth(self, first: int) -> int:
        """How many pipelines lie above the one starting at ``first``."""
        count = 0
        above = self.parent.get(first)
        while above is not None:
            count += 1
            above = self.parent.get(self.root(above))
        return count

    def stage_claims(self, values: dict[str, str]) -> Iterable[tuple[int, int]]:
        """(pipeline, stage) for each metric that names the stage it was measured in: an
        exchange's write side in the pipelines below it, its read side in its own."""
        for node_id, node in self.nodes.items():
            cut = self.is_cut(node_id)
            for metric in node.get("metrics") or []:
                stage = _stage_of(values.get(str(metric.get("accumulatorId"))))
                name = str(metric.get("name", ""))
                if stage is None:
                    continue
                if not cut or name.startswith(_READ_SIDE):
                    yield self.root(node_id), stage
                elif name in _WRITE_SIDE:
                    for child, above in self.parent.items():
                        if above == node_id:
                            yield self.root(child), stage


def pipelines(
    graph: dict[str, Any], values: dict[str, str], ran: list[int], action_vertex: str | None
) -> list[_Pipeline]:
    """The query's plan graph cut at its exchanges, each piece with its stage(s) and its
    vertices: those its observations name, the vertex that ran the query for the last piece,
    and for a piece that names none, those of the piece it feeds. ``values``: the metrics'
    values by accumulator id; ``ran``: the query's completed stages."""
    plan = _PlanGraph(graph)
    found: dict[int, _Pipeline] = {}
    for node_id, node in plan.nodes.items():
        key = plan.root(node_id)
        if key not in found:
            above = plan.parent.get(key)
            feeds = None if above is None else plan.root(above)
            found[key] = _Pipeline([], set(), set(), plan.depth(key), feeds)
        found[key].nodes.append(node)
        found[key].vertices |= observed_vertices(str(node.get("desc", "")))
    for key, stage in plan.stage_claims(values):
        found[key].stages.add(stage)
    pieces = sorted(found.values(), key=lambda p: -p.depth)
    _assign_stages(pieces, ran)
    top = [p for p in pieces if p.depth == 0]
    if action_vertex is not None and top:
        top[0].vertices.add(action_vertex)
    for piece in reversed(pieces):  # the work after an exchange is its receiver's
        if not piece.vertices and piece.feeds is not None:
            piece.vertices |= found[piece.feeds].vertices
    return pieces


def _assign_stages(pieces: list[_Pipeline], ran: list[int]) -> None:
    """Give the pipelines Spark printed no stage for (a one-task stage's metrics carry none)
    the stages of the query nobody claimed: in order when they pair up one to one (stage ids
    grow from the first pipeline to the last), else the last stage to the last pipeline."""
    claimed = {s for p in pieces for s in p.stages}
    free = sorted(s for s in ran if s not in claimed)
    bare = [p for p in pieces if not p.stages]  # deepest first
    if free and len(free) == len(bare):
        for piece, stage in zip(bare, free, strict=True):
            piece.stages.add(stage)
    elif free and bare and bare[-1].depth == 0:
        bare[-1].stages.add(free[-1])


class SparkPipelines:
    """Reads the finished queries of one job (those carrying ``job_description``)."""

    def __init__(self, spark: SparkSession, job_description: str) -> None:
        self.spark, self.description = spark, job_description
        self.waiting: dict[int, str | None] = {}
        """This job's queries listed, not yet finished (with the vertex that ran each)."""
        self.newest = self._newest_now()
        """The newest query id listed so far (of any job): the job's come after the newest
        there was when it started."""
        self.counted: set[int] = set()
        """Stages already read (a nested query's show again in its parent's)."""
        self.unsettled: dict[int, float] = {}
        """Finished queries first read before their stages were all recorded, and when."""

    def _newest_now(self) -> int:
        try:
            return spark_status.stores(self.spark).newest_id()
        except Exception as error:  # then the first poll looks back further
            log.debug("spark queries not listed", error=str(error)[:300])
            return -1

    def poll(self) -> list[PipelineRun]:
        """The pipelines of this job's queries finished since the last poll. Never raises:
        metrics explain a run, they never fail it."""
        try:
            return self._poll()
        except Exception as error:
            log.debug("spark pipelines not read", error=str(error)[:300])
            return []

    def drain(self, timeout_s: float = SETTLE_S) -> list[PipelineRun]:
        """``poll``, then poll again while a query of this job is still listed as running,
        for at most ``timeout_s``: Spark's status store records a query's end on its listener
        thread, after the action has returned, and a job's last query must not be missed."""
        runs = self.poll()
        deadline = time.monotonic() + timeout_s
        while self.waiting and time.monotonic() < deadline:
            time.sleep(0.02)
            runs.extend(self.poll())
        return runs

    def _poll(self) -> list[PipelineRun]:
        stores = spark_status.stores(self.spark)
        self._list_new(stores)
        runs: list[PipelineRun] = []
        for execution_id, vertex in sorted(self.waiting.items()):
            found = stores.sql.execution(execution_id)
            if not found.isDefined():  # evicted from Spark's store: gone
                del self.waiting[execution_id]
                self.unsettled.pop(execution_id, None)
                continue
            execution = found.get()
            if execution.completionTime().isDefined():
                read = self._read(stores, execution_id, execution, vertex)
                if read is None:  # its stages are not all recorded yet: the next poll reads it
                    continue
                del self.waiting[execution_id]
                self.unsettled.pop(execution_id, None)
                runs.extend(read)
        return runs

    def _list_new(self, stores: Stores) -> None:
        """Note this job's queries among those Spark started since the last poll (their ids
        and descriptions only: a query listed whole carries its plan's text, tens of ms)."""
        count = int(stores.sql.executionsCount())
        newest = stores.newest_id(count)
        fresh = min(LOOKBACK, max(0, newest - self.newest))
        if fresh:
            listed = stores.sql.executionsList(max(0, count - fresh), fresh)
            for index in range(int(listed.size())):
                execution = listed.apply(index)
                execution_id = int(execution.executionId())
                if execution_id <= self.newest:
                    continue
                described = str(execution.description())
                ours, vertex = described_vertex(described, self.description)
                if ours:
                    self.waiting[execution_id] = vertex
        self.newest = max(self.newest, newest)

    def _read(
        self, stores: Stores, execution_id: int, execution: Any, vertex: str | None
    ) -> list[PipelineRun] | None:
        """One finished query's pipelines, each run once per stage (a stage counted by an
        earlier query, as a nested one's can be, is not counted again). None while a stage
        of it is not recorded as ended yet (Spark's two status stores are written apart),
        for at most ``SETTLE_S``: then a stage still missing (evicted) is left out."""
        listed = {int(n) for n in re.findall(r"\d+", str(execution.stages()))}
        stages: dict[int, dict[str, Any]] = {}
        first_tried = self.unsettled.setdefault(execution_id, time.monotonic())
        patient = time.monotonic() - first_tried < SETTLE_S
        for stage in sorted(listed - self.counted):
            try:
                attempt = stores.app.lastStageAttempt(stage)
            except Exception:  # py4j's NoSuchElementException: not recorded (or evicted)
                if patient:
                    return None
                continue
            data = stores.read(attempt)
            if data.get("status") in _RUNNING and patient:
                return None
            if data.get("status") == "COMPLETE":
                stages[stage] = data
        if not stages:
            return []
        graph = stores.read(stores.sql.planGraph(execution_id))
        values = stores.read(stores.sql.executionMetrics(execution_id))
        metric_values = {str(k): str(v) for k, v in values.items()}
        pieces = pipelines(graph, metric_values, sorted(stages), vertex)
        query_end = max(int(d.get("completionTime") or 0) for d in stages.values())
        runs = []
        for piece in pieces:
            for stage in sorted(piece.stages & stages.keys()):
                if not piece.vertices:
                    continue
                data = stages[stage]
                runs.append(
                    PipelineRun(
                        vertices=frozenset(piece.vertices),
                        stage=stage,
                        run_ms=int(data.get("executorRunTime") or 0),
                        tasks=int(data.get("numTasks") or 0),
                        started_ms=int(data.get("submissionTime") or 0),
                        ended_ms=int(data.get("completionTime") or 0),
                        query_ended_ms=query_end,
                    )
                )
        self.counted |= stages.keys()
        if len(self.counted) > COUNTED_KEPT:  # stage ids only grow: the old ones never recur
            self.counted = set(sorted(self.counted)[-COUNTED_KEPT // 2 :])
        return runs
