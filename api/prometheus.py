"""Prometheus ``/metrics``: HTTP requests, jobs by status, worker heartbeats, jobs whose
snapshots are under-replicated, and per vertex of each running job its items, backpressure,
coalesced watermark and lag.

Each app has its own registry (tests build several apps in one process). Request metrics are
counted by a pure ASGI middleware, labelled with the route *template* so ids never explode
the label space; the job and worker gauges are read at scrape time by a collector.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import redis
import structlog
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jetspark.cli.supervisor import read_restarts
from jetspark.db.tables import Job
from jetspark.jobs.snapshots import REPLICATION, under_replicated_jobs
from jetspark.jobs.status import HELD_BY_WORKER, JobStatus
from jetspark.metrics.report import JobMetrics, now_ms, wall_clock_lag
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient

log = structlog.get_logger("jetspark.api")

VERTEX_GAUGES: tuple[tuple[str, str], ...] = (
    ("items_in", "Items the vertex's processors took in"),
    ("items_out", "Items the vertex's processors emitted"),
    ("backpressure_ratio", "Worst share of time a processor was blocked handing output on"),
    ("busy_ratio", "Share of time the vertex's processors (or Spark stages) were working"),
    ("bottleneck", "1 for the job's busiest vertex when at least half busy, else 0"),
    ("coalesced_watermark_seconds", "The vertex's coalesced watermark, Unix seconds"),
    ("lag_seconds", "Now minus the vertex's coalesced watermark (event time within a day of now)"),
)


class RequestMetrics:
    """Counts requests and their latency by method, route template and status.

    A labelled child of a metric is looked up once per label set and kept: ``labels()``
    builds and checks the label tuple under a lock each time, a cost on every request.
    """

    def __init__(self, app: ASGIApp, *, registry: CollectorRegistry) -> None:
        self.app = app
        self.requests = Counter(
            "jetspark_http_requests",
            "HTTP requests served",
            ["method", "route", "status"],
            registry=registry,
        )
        self.latency = Histogram(
            "jetspark_http_request_duration_seconds",
            "Time to the response's first byte",
            ["method", "route"],
            registry=registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10),
        )
        # Bounded: methods and statuses are few, routes are templates ("unmatched" for the
        # rest); an unknown method is counted under one label.
        self.counters: dict[tuple[str, str, int], Any] = {}
        self.histograms: dict[tuple[str, str], Any] = {}

    def _counter(self, method: str, route: str, status: int) -> Any:
        key = (method, route, status)
        child = self.counters.get(key)
        if child is None:
            child = self.counters[key] = self.requests.labels(method, route, str(status))
        return child

    def _histogram(self, method: str, route: str) -> Any:
        key = (method, route)
        child = self.histograms.get(key)
        if child is None:
            child = self.histograms[key] = self.latency.labels(method, route)
        return child

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        method = scope["method"] if scope["method"] in KNOWN_METHODS else "other"

        async def send_with_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                route = _route_template(scope)
                self._histogram(method, route).observe(time.perf_counter() - started)
            await send(message)

        try:
            await self.app(scope, receive, send_with_status)
        finally:
            self._counter(method, _route_template(scope), status).inc()


KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _route_template(scope: Scope) -> str:
    route: Any = scope.get("route")
    path = getattr(route, "path", None)
    return str(path) if path else "unmatched"


class JobServerCollector(Collector):
    """Jobs by status (PostgreSQL) and the age of each worker's heartbeat (Redis)."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        client: RedisClient,
        keys: Keys,
        *,
        restarts_file: Path | None = None,
    ) -> None:
        self.sessions = sessions
        self.client = client
        self.keys = keys
        self.restarts_file = restarts_file
        """Where ``jetspark up`` counts its restarts (``JETSPARK_SUPERVISOR_STATE_FILE``)."""

    def collect(self) -> Iterator[Metric]:
        yield self._supervisor_restarts()
        yield self._jobs_by_status()
        yield from self._under_replicated()
        yield from self._worker_heartbeats()
        yield from self._running_vertices()

    def _running_vertices(self) -> Iterable[Metric]:
        """Gauges per (job, vertex) of the jobs a worker holds, from their latest document."""
        families = {
            name: GaugeMetricFamily(f"jetspark_job_vertex_{name}", text, labels=["job", "vertex"])
            for name, text in VERTEX_GAUGES
        }
        with self.sessions() as session:
            held = [s.value for s in HELD_BY_WORKER]
            ids = list(session.scalars(select(Job.id).where(Job.status.in_(held)).limit(500)))
        raw = self.client.mget([self.keys.job_metrics(i) for i in ids]) if ids else []
        now = now_ms()
        for job_id, text in zip(ids, raw or [], strict=True):
            if text is None:
                continue
            try:
                doc = JobMetrics.model_validate_json(text)
            except ValidationError:
                log.warning("unreadable metrics document skipped", job=str(job_id))
                continue
            for vertex, m in doc.vertices.items():
                labels = [str(job_id), vertex]
                families["items_in"].add_metric(labels, m.items_in)
                families["items_out"].add_metric(labels, m.items_out)
                families["backpressure_ratio"].add_metric(labels, m.backpressure_ratio)
                families["busy_ratio"].add_metric(labels, m.busy_ratio)
                families["bottleneck"].add_metric(labels, 1.0 if m.bottleneck else 0.0)
                if m.coalesced_wm is not None:
                    families["coalesced_watermark_seconds"].add_metric(
                        labels, m.coalesced_wm / 1000
                    )
                    lag = wall_clock_lag(now, m.coalesced_wm)
                    if lag is not None:  # replayed or synthetic event time has none
                        families["lag_seconds"].add_metric(labels, lag / 1000)
        yield from families.values()

    def _supervisor_restarts(self) -> Metric:
        """Children (and embedded servers) ``jetspark up`` restarted, by name."""
        family = CounterMetricFamily(
            "jetspark_supervisor_restarts",
            "Restarts by `jetspark up` of a child or embedded server that died",
            labels=["child"],
        )
        state = self.restarts_file
        for name, count in sorted(read_restarts(state).items() if state else []):
            family.add_metric([name], count)
        return family

    def _jobs_by_status(self) -> Metric:
        family = GaugeMetricFamily("jetspark_jobs", "Jobs by status", labels=["status"])
        with self.sessions() as session:
            rows = session.execute(select(Job.status, func.count()).group_by(Job.status))
            counts = {str(status): int(count) for status, count in rows}
        for status in JobStatus:
            family.add_metric([status.value], counts.get(status.value, 0))
        return family

    def _under_replicated(self) -> Iterable[Metric]:
        """Jobs whose last snapshot lacks backups (a Redis node lost), and per job how many."""
        with self.sessions() as session:
            count, jobs = under_replicated_jobs(session, limit=500)
        yield GaugeMetricFamily(
            "jetspark_jobs_under_replicated",
            "Unfinished jobs whose last snapshot has fewer Redis replicas than backup_count",
            value=count,
        )
        missing = GaugeMetricFamily(
            "jetspark_job_snapshot_backups_missing",
            "backup_count minus the fewest replicas any primary gave the job's last snapshot",
            labels=["job"],
        )
        for job in jobs:
            entry = (job.last_snapshot or {}).get(REPLICATION, {})
            gap = int(entry.get("backup_count", 0)) - int(entry.get("replicas", 0))
            missing.add_metric([str(job.id)], gap)
        yield missing

    def _worker_heartbeats(self) -> Iterable[Metric]:
        family = GaugeMetricFamily(
            "jetspark_worker_heartbeat_age_seconds",
            "Seconds since each live worker's last heartbeat",
            labels=["worker"],
        )
        now = time.time()
        prefix = self.keys.worker_heartbeat("")
        for key in self.client.scan_iter(match=self.keys.worker_heartbeat_pattern(), count=200):
            try:
                beat = self.client.get(key)
                if beat is not None:
                    family.add_metric([str(key)[len(prefix) :]], max(0.0, now - float(str(beat))))
            except (redis.ResponseError, ValueError):
                # Not a heartbeat (another type, or not a time): skipped, the scrape goes on.
                log.warning("unreadable worker heartbeat skipped", key=str(key))
        yield family
