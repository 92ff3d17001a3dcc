"""THE metrics document: what workers publish, the API serves, Prometheus and the page read.

One ``JobMetrics`` document per job, produced whole by the job's worker (the batch engine's
reporter every ~0.5 s, the streaming engine every epoch) and handed to ``MetricsPublisher``:
it is kept at ``Keys.job_metrics(job_id)`` (JSON, with an expiry) and appended to the job's
event stream as a ``metrics`` event (SSE). The last document of a job (``final``) is also
kept in PostgreSQL (``jobs.metrics``). Field names are those of ``jetspark.metrics.names``.

``ProcessorMetrics`` — one processor (one Spark partition) of a vertex:

- ``index``: the processor's global index g (0 .. parallelism-1); ``member``: the member it
  runs on, ``g // local_parallelism``.
- ``items_in`` / ``items_out``: items taken from its inbox / drained from its outbox;
  ``received_by_ordinal`` / ``emitted_by_ordinal``: the same per inbound / outbound ordinal.
- ``top_observed_wm``: the highest watermark (ms) it received on any input;
  ``coalesced_wm``: the watermark of its inputs coalesced (min over non-idle inputs);
  ``last_forwarded_wm``: the last watermark it emitted. ``None`` where there is none (batch).
- ``idle``: its inputs are idle (they send no watermark and must not hold others back).
- ``queue_size`` / ``queue_capacity``: items waiting in its inbound queues / their capacity.
- ``backpressure_ratio``: share of its wall time (0..1) it was blocked handing output on
  (a full outbox, or downstream not taking its output batch); ``busy_ratio``: share of its
  wall time spent inside processor callbacks.
- ``late_items_dropped``: items behind the watermark it dropped.

``VertexMetrics`` — the vertex's processors aggregated (``aggregate_vertex``): counts and
queues summed; ``top_observed_wm`` the max; ``coalesced_wm`` and ``last_forwarded_wm`` the
min over non-idle processors (``None`` if one of them has none); ``idle`` when every processor
is; ``backpressure_ratio`` the max (the worst processor) with its ``backpressure_level``
(SPEC §6: ``ok`` < 0.1 <= ``low`` < 0.5 <= ``high``); ``busy_ratio`` the mean. Set by the
producer: ``items_out_per_s`` (emitted per second since its previous document), for sources
``input_rate_per_s`` (items taken in per second, the same window) and
``processing_rate_per_s`` (items per second of busy time: what it could do unblocked), and
``lag_ms`` (``at_ms`` - ``coalesced_wm``, only while event time is near the wall clock:
within ``NEAR_WALL_CLOCK_MS``, a day; replayed or synthetic event time, 1970's say, has no
lag that means anything). ``event_time_per_s``: how far ``coalesced_wm`` advanced per
second of wall time over the last ``EVENT_TIME_WINDOW_MS`` or so (1000: as fast as the
clock; 0: stalled; a stream's watermarks move once per epoch, so a window of one document
would read 0 between epochs);
``event_time_gap_ms``: ``top_observed_wm`` - ``coalesced_wm``, how far the vertex's
watermark is behind the newest one it saw (the inputs' skew). ``set_event_time`` sets the
three. ``bottleneck``: the job's busiest vertex, when at least half busy (vertices fused
into its Spark stage with it). ``processors`` lists the processors that reported (built-in
vertices run inside the JVM: their busy and backpressure come from Spark's metrics of the
stages that ran them, ``worker/vertex_load.py``).

``JobMetrics``: ``job_id``, ``at_ms`` (wall clock, ms since the epoch, when produced),
``epoch`` (the streaming epoch, ``None`` in batch), ``final`` (the job's last document) and
``vertices`` by name.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence

import redis
import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jetspark.metrics.names import BackpressureLevel
from jetspark.queue import events
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient

log = structlog.get_logger("jetspark.metrics")

METRICS_TTL_S = 7 * 24 * 3600
"""A job's latest document outlives the job by this long (its final one is in PostgreSQL)."""


class _Counts(BaseModel):
    model_config = ConfigDict(extra="ignore")

    items_in: int = 0
    items_out: int = 0
    received_by_ordinal: dict[int, int] = Field(default_factory=dict)
    emitted_by_ordinal: dict[int, int] = Field(default_factory=dict)
    top_observed_wm: int | None = None
    coalesced_wm: int | None = None
    last_forwarded_wm: int | None = None
    idle: bool = False
    queue_size: int = 0
    queue_capacity: int = 0
    backpressure_ratio: float = Field(default=0.0, ge=0.0, le=1.0)
    busy_ratio: float = Field(default=0.0, ge=0.0, le=1.0)
    late_items_dropped: int = 0


class ProcessorMetrics(_Counts):
    """One processor of a vertex (see the module docstring)."""

    index: int = Field(ge=0)
    member: int = Field(default=0, ge=0)


class VertexMetrics(_Counts):
    """A vertex: its processors aggregated, plus rates and lag (see the module docstring)."""

    backpressure_level: BackpressureLevel = BackpressureLevel.ok
    items_out_per_s: float | None = None
    input_rate_per_s: float | None = None
    processing_rate_per_s: float | None = None
    lag_ms: int | None = None
    event_time_per_s: float | None = None
    event_time_gap_ms: int | None = None
    bottleneck: bool = False
    processors: list[ProcessorMetrics] = Field(default_factory=list)


class JobMetrics(BaseModel):
    """A job's metrics document (see the module docstring)."""

    model_config = ConfigDict(extra="ignore")

    job_id: uuid.UUID
    at_ms: int
    epoch: int | None = None
    final: bool = False
    vertices: dict[str, VertexMetrics] = Field(default_factory=dict)

    @classmethod
    def empty(cls, job_id: uuid.UUID) -> JobMetrics:
        return cls(job_id=job_id, at_ms=now_ms())


def now_ms() -> int:
    return int(time.time() * 1000)


EVENT_TIME_WINDOW_MS = 10_000
"""The wall time ``event_time_per_s`` is measured over (its producer keeps the samples)."""

NEAR_WALL_CLOCK_MS = 24 * 3600 * 1000
"""Event time within this of the wall clock is wall-clock time: its lag means something."""


def wall_clock_lag(at_ms: int, watermark: int | None) -> int | None:
    """``at_ms - watermark`` when event time is near the wall clock, else None."""
    if watermark is None or abs(at_ms - watermark) > NEAR_WALL_CLOCK_MS:
        return None
    return max(0, at_ms - watermark)


def set_event_time(vertex: VertexMetrics, at_ms: int, since: tuple[int, int] | None) -> None:
    """A vertex's ``lag_ms``, ``event_time_per_s`` (since ``since``: an earlier document's
    ``at_ms`` and ``coalesced_wm``) and ``event_time_gap_ms`` (see the module docstring)."""
    wm = vertex.coalesced_wm
    vertex.lag_ms = wall_clock_lag(at_ms, wm)
    if wm is not None and since is not None and at_ms > since[0]:
        vertex.event_time_per_s = round(max(0, wm - since[1]) * 1000 / (at_ms - since[0]), 3)
    if wm is not None and vertex.top_observed_wm is not None:
        vertex.event_time_gap_ms = max(0, vertex.top_observed_wm - wm)


def _sum_by_ordinal(maps: Sequence[dict[int, int]]) -> dict[int, int]:
    total: dict[int, int] = {}
    for counts in maps:
        for ordinal, n in counts.items():
            total[ordinal] = total.get(ordinal, 0) + n
    return total


def _min_of_active(values: Sequence[int | None]) -> int | None:
    """The min, or None when there is nothing or one of them has no watermark yet."""
    if not values or any(v is None for v in values):
        return None
    return min(v for v in values if v is not None)


def aggregate_vertex(processors: Sequence[ProcessorMetrics]) -> VertexMetrics:
    """A vertex's metrics from its processors' (rates and lag are the producer's to set)."""
    ordered = sorted(processors, key=lambda p: p.index)
    active = [p for p in ordered if not p.idle]
    ratio = max((p.backpressure_ratio for p in ordered), default=0.0)
    tops = [p.top_observed_wm for p in ordered if p.top_observed_wm is not None]
    return VertexMetrics(
        items_in=sum(p.items_in for p in ordered),
        items_out=sum(p.items_out for p in ordered),
        received_by_ordinal=_sum_by_ordinal([p.received_by_ordinal for p in ordered]),
        emitted_by_ordinal=_sum_by_ordinal([p.emitted_by_ordinal for p in ordered]),
        top_observed_wm=max(tops) if tops else None,
        coalesced_wm=_min_of_active([p.coalesced_wm for p in active]),
        last_forwarded_wm=_min_of_active([p.last_forwarded_wm for p in active]),
        idle=bool(ordered) and not active,
        queue_size=sum(p.queue_size for p in ordered),
        queue_capacity=sum(p.queue_capacity for p in ordered),
        backpressure_ratio=ratio,
        backpressure_level=BackpressureLevel.of(ratio),
        busy_ratio=sum(p.busy_ratio for p in ordered) / len(ordered) if ordered else 0.0,
        late_items_dropped=sum(p.late_items_dropped for p in ordered),
        processors=list(ordered),
    )


class MetricsPublisher:
    """Publishes a job's documents: the latest kept in Redis, each one an SSE event."""

    def __init__(self, client: RedisClient, keys: Keys, *, ttl_s: int = METRICS_TTL_S) -> None:
        self.client, self.keys, self.ttl_s = client, keys, ttl_s

    def publish(self, doc: JobMetrics) -> str:
        """Store ``doc`` as the job's latest and append it to its events; the event id."""
        data = doc.model_dump(mode="json")
        self.client.set(self.keys.job_metrics(doc.job_id), doc.model_dump_json(), ex=self.ttl_s)
        return events.publish(self.client, self.keys, doc.job_id, events.EventKind.metrics, data)

    def latest(self, job_id: uuid.UUID) -> JobMetrics | None:
        """The job's latest document in Redis, if any (a key of another type or a document
        that does not parse counts as none: logged, never raised to a reader)."""
        key = self.keys.job_metrics(job_id)
        try:
            raw = self.client.get(key)
            if raw is None:
                return None
            return JobMetrics.model_validate_json(raw if isinstance(raw, str | bytes) else str(raw))
        except (redis.ResponseError, ValidationError) as error:
            log.warning("unreadable metrics document skipped", key=key, error=str(error)[:200])
            return None
