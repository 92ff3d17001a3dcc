"""A running job's live metrics, produced in the worker (the driver) by one thread per job.

``JobReporter`` merges what is known so far into a ``JobMetrics`` document and publishes it
every ``interval_s``: the live reports the job's Python processors write from their Spark
tasks (``worker.engine.python.live``, one hash per attempt) and the per-vertex counts the
engine has observed (``JobControl.counts``; built-in vertices run inside the JVM and report
counts once their Spark action has finished), and for the vertices Spark runs, busy and
backpressure from Spark's own metrics of the job's finished queries
(``worker/spark_pipelines.py``, ``worker/vertex_load.py``). ``finish`` publishes the final
document, which the worker stores in PostgreSQL with the job's last status.

A vertex's counts are the larger of the two sources (the processors' are live, the engine's
exact once known); rates are per second since the previous document.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis
import structlog
from pydantic import ValidationError

from jetspark.dag.plan import ExecutionPlan
from jetspark.metrics.names import BackpressureLevel
from jetspark.metrics.report import (
    EVENT_TIME_WINDOW_MS,
    JobMetrics,
    MetricsPublisher,
    ProcessorMetrics,
    VertexMetrics,
    aggregate_vertex,
    now_ms,
    set_event_time,
)
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient
from jetspark.retry import OutageLog
from worker.engine.contract import JobControl, RunnableJob, VertexCounts
from worker.spark_pipelines import PipelineRun, SparkPipelines
from worker.vertex_load import fused_loads, vertex_loads, window_of

log = structlog.get_logger("jetspark.worker")


BOTTLENECK_BUSY = 0.5
"""The busiest vertex is marked the job's bottleneck when it is at least this busy."""
BOTTLENECK_TIE = 0.02
"""Vertices as busy as the busiest but this much (one Spark stage's) are marked with it."""


@dataclass(frozen=True)
class MetricsReporting:
    """Where and how often a worker publishes its jobs' metrics."""

    client: RedisClient
    keys: Keys
    interval_s: float = 0.5


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class JobReporter:
    """The metrics of one attempt of one job; ``start``, then ``finish`` exactly once."""

    def __init__(
        self,
        reporting: MetricsReporting,
        job: RunnableJob,
        control: JobControl,
        pipelines: SparkPipelines | None = None,
        *,
        cores: int = 1,
    ) -> None:
        """``pipelines``: the job's Spark queries, read back for its built-in vertices' busy
        and backpressure (none: those stay 0); ``cores``: the task slots Spark has."""
        self.reporting, self.job, self.control = reporting, job, control
        self.pipelines, self.cores = pipelines, cores
        self.runs: list[PipelineRun] = []
        self.client = reporting.client
        self.publisher = MetricsPublisher(reporting.client, reporting.keys)
        self.processors_key = reporting.keys.job_processor_metrics(job.id, job.attempt)
        plan = ExecutionPlan.model_validate(job.plan) if job.plan else None
        self.order = list(plan.order) if plan else []
        self.local_parallelism = (
            {v.name: v.local_parallelism for v in plan.vertices} if plan else {}
        )
        self.sources = {n for n in self.order if plan and not plan.inbound(n)}
        self.stream = bool(plan and plan.runs_in_epochs)
        self.stages = [stage.vertices for stage in plan.stages] if plan else []
        """The plan's stages: vertices fused over local edges, run in one Spark stage."""
        self.reporting_own = (
            {v.name for v in plan.vertices if v.processor == "python"} if plan else set()
        )
        """Vertices whose processors report their own busy and backpressure from their tasks."""
        self.counts: Mapping[str, VertexCounts] = {}
        self.previous: tuple[int, dict[str, int]] = (now_ms(), {})
        self.watermarks: dict[str, deque[tuple[int, int]]] = {}
        """Each vertex's (``at_ms``, ``coalesced_wm``) over the last ``EVENT_TIME_WINDOW_MS``:
        event time's pace."""
        self.stopped = threading.Event()
        self.thread: threading.Thread | None = None
        self.final: JobMetrics | None = None

    def start(self) -> JobReporter:
        self.client.delete(self.processors_key)  # a previous run of this attempt, if any
        self.thread = threading.Thread(
            target=self._loop, name=f"metrics-{self.job.id}", daemon=True
        )
        self.thread.start()
        return self

    def finish(self, counts: Mapping[str, VertexCounts] | None = None) -> JobMetrics:
        """Stop the thread and publish the final document (``counts``: the engine's final)."""
        if self.final is not None:
            return self.final
        self.stopped.set()
        if self.thread is not None:
            self.thread.join(timeout=10)
        if counts is not None:
            self.counts = counts
        doc = self.build(final=True, refresh_counts=counts is None)
        try:
            self.publisher.publish(doc)
        except redis.RedisError as error:
            log.warning("final metrics not published", job=str(self.job.id), error=str(error))
        self.final = doc
        return doc

    def _loop(self) -> None:
        outage = OutageLog(f"job {self.job.id}: publishing metrics", log)
        while not self.stopped.wait(self.reporting.interval_s):
            try:
                self.publisher.publish(self.build())
                outage.recovered()
            except (redis.RedisError, ValidationError) as error:
                outage.failed(error)  # the next tick is the retry: a skipped one costs nothing

    # -- the document ---------------------------------------------------------------------
    def build(self, *, final: bool = False, refresh_counts: bool = True) -> JobMetrics:
        if refresh_counts:
            self._refresh_counts()
        by_vertex = self._processor_reports()
        epoch = self._merge_marks(by_vertex)
        at = now_ms()
        vertices: dict[str, VertexMetrics] = {}
        for name in self.order or sorted(by_vertex.keys() | self.counts.keys()):
            vertex = aggregate_vertex(by_vertex.get(name, []))
            counted = self.counts.get(name)
            if counted is not None:
                vertex.items_in = max(vertex.items_in, counted.items_in)
                vertex.items_out = max(vertex.items_out, counted.items_out)
            vertices[name] = vertex
        self._spark_loads(vertices, final=final)
        self._rates(at, vertices)
        return JobMetrics(job_id=self.job.id, at_ms=at, epoch=epoch, final=final, vertices=vertices)

    def _merge_marks(self, by_vertex: dict[str, list[ProcessorMetrics]]) -> int | None:
        """A streaming job's watermarks, per processor, into the processors' reports."""
        read = self.control.marks
        if read is None:
            return None
        try:
            marks = read()
        except Exception as error:  # the engine moving on to the next epoch as we read
            log.debug("watermarks not read", job=str(self.job.id), error=str(error))
            return None
        for vertex, processors in marks.processors.items():
            reported = {p.index: p for p in by_vertex.get(vertex, [])}
            for index, fields in enumerate(processors):
                member = index // self.local_parallelism.get(vertex, 1)
                processor = reported.setdefault(index, ProcessorMetrics(index=index, member=member))
                for name, value in fields.items():
                    setattr(processor, name, value)
            by_vertex[vertex] = [reported[i] for i in sorted(reported)]
        return marks.epoch

    def _spark_loads(self, vertices: dict[str, VertexMetrics], *, final: bool = False) -> None:
        """Busy and backpressure of the vertices Spark runs (``worker/vertex_load.py``), and
        the bottleneck: the busiest vertex, when busy at least ``BOTTLENECK_BUSY``. The final
        document waits for the job's last queries to be recorded (``SparkPipelines.drain``)."""
        if self.pipelines is not None:
            read = self.pipelines.drain if final else self.pipelines.poll
            self.runs.extend(read())
        window = window_of(self.runs, stream=self.stream)
        if window is not None:
            if self.stream:  # older runs are out of every later window
                self.runs = [r for r in self.runs if r.query_ended_ms > window[0]]
            behind = list(self.control.behind) if self.stream else None
            loads = vertex_loads(self.runs, window, self.cores, behind)
            for name, load in fused_loads(loads, self.stages).items():
                vertex = vertices.get(name)
                if vertex is not None and name not in self.reporting_own:
                    vertex.busy_ratio = load.busy_ratio
                    vertex.backpressure_ratio = load.backpressure_ratio
        busiest = max(vertices.values(), key=lambda v: v.busy_ratio, default=None)
        if busiest is not None and busiest.busy_ratio >= BOTTLENECK_BUSY:
            for vertex in vertices.values():
                vertex.bottleneck = vertex.busy_ratio >= busiest.busy_ratio - BOTTLENECK_TIE

    def _refresh_counts(self) -> None:
        read = self.control.counts
        if read is None:
            return
        try:
            self.counts = dict(read())
        except Exception as error:  # the engine adding a vertex as we read, a JVM hiccup
            log.debug("vertex counts not read", job=str(self.job.id), error=str(error))

    def _processor_reports(self) -> dict[str, list[ProcessorMetrics]]:
        raw: Any = self.client.hgetall(self.processors_key)
        found: dict[str, list[ProcessorMetrics]] = {}
        for field, value in dict(raw).items():
            vertex, _, _ = _text(field).rpartition("/")
            try:
                found.setdefault(vertex, []).append(ProcessorMetrics.model_validate_json(value))
            except ValidationError:
                continue
        return found

    def _rates(self, at: int, vertices: dict[str, VertexMetrics]) -> None:
        before, emitted = self.previous
        seconds = max(0.001, (at - before) / 1000)
        for name, vertex in vertices.items():
            rate = max(0, vertex.items_out - emitted.get(name, 0)) / seconds
            vertex.items_out_per_s = round(rate, 3)
            if name in self.sources:
                vertex.input_rate_per_s = vertex.items_out_per_s
                if vertex.busy_ratio > 0:
                    vertex.processing_rate_per_s = round(rate / vertex.busy_ratio, 3)
            samples = self.watermarks.setdefault(name, deque())
            while len(samples) > 1 and samples[1][0] <= at - EVENT_TIME_WINDOW_MS:
                samples.popleft()  # the oldest kept is the last at or before the window
            set_event_time(vertex, at, samples[0] if samples else None)
            if vertex.coalesced_wm is not None:
                samples.append((at, vertex.coalesced_wm))
            vertex.backpressure_level = BackpressureLevel.of(vertex.backpressure_ratio)
        self.previous = (at, {name: v.items_out for name, v in vertices.items()})
