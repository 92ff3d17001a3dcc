"""The metrics document: names, aggregation, publishing to Redis and the job's events."""

from __future__ import annotations

import json
import uuid
from typing import Any

import redis

from jetspark.metrics import names
from jetspark.metrics.names import BackpressureLevel
from jetspark.metrics.report import (
    JobMetrics,
    MetricsPublisher,
    ProcessorMetrics,
    VertexMetrics,
    aggregate_vertex,
    set_event_time,
)
from jetspark.queue.keys import Keys


def test_every_metric_name_is_a_field_of_the_vertex_document() -> None:
    metric_names = {
        value
        for key, value in vars(names).items()
        if key.isupper() and isinstance(value, str) and not key.startswith("_")
    }
    assert metric_names <= set(VertexMetrics.model_fields)
    assert set(ProcessorMetrics.model_fields) - {"index", "member"} <= set(
        VertexMetrics.model_fields
    )


def test_a_vertex_sums_its_processors_takes_the_worst_backpressure_and_the_active_minimum() -> None:
    processors = [
        ProcessorMetrics(
            index=1,
            items_in=10,
            items_out=5,
            received_by_ordinal={0: 6, 1: 4},
            emitted_by_ordinal={0: 5},
            top_observed_wm=900,
            coalesced_wm=800,
            last_forwarded_wm=800,
            queue_size=3,
            queue_capacity=10,
            backpressure_ratio=0.6,
            busy_ratio=0.2,
        ),
        ProcessorMetrics(
            index=0,
            items_in=1,
            items_out=1,
            received_by_ordinal={0: 1},
            top_observed_wm=1000,
            coalesced_wm=950,
            last_forwarded_wm=940,
            queue_size=1,
            queue_capacity=10,
            backpressure_ratio=0.05,
            busy_ratio=0.4,
        ),
        ProcessorMetrics(index=2, idle=True, coalesced_wm=10, last_forwarded_wm=10),
    ]
    vertex = aggregate_vertex(processors)
    assert (vertex.items_in, vertex.items_out) == (11, 6)
    assert vertex.received_by_ordinal == {0: 7, 1: 4}
    assert vertex.emitted_by_ordinal == {0: 5}
    assert vertex.top_observed_wm == 1000
    assert (vertex.coalesced_wm, vertex.last_forwarded_wm) == (800, 800)  # idle one left out
    assert not vertex.idle
    assert (vertex.queue_size, vertex.queue_capacity) == (4, 20)
    assert vertex.backpressure_ratio == 0.6
    assert vertex.backpressure_level is BackpressureLevel.high
    assert [p.index for p in vertex.processors] == [0, 1, 2]


def test_a_vertex_without_a_watermark_somewhere_has_none_and_all_idle_is_idle() -> None:
    waiting = aggregate_vertex(
        [ProcessorMetrics(index=0, coalesced_wm=5), ProcessorMetrics(index=1)]
    )
    assert waiting.coalesced_wm is None
    idle = aggregate_vertex([ProcessorMetrics(index=0, idle=True)])
    assert idle.idle and idle.coalesced_wm is None
    assert aggregate_vertex([]).backpressure_level is BackpressureLevel.ok


def test_publish_keeps_the_latest_document_and_appends_a_metrics_event(
    redis_client: redis.Redis, redis_namespace: str
) -> None:
    keys = Keys(f"{redis_namespace}-report")
    publisher = MetricsPublisher(redis_client, keys)
    job_id = uuid.uuid4()
    first = JobMetrics(
        job_id=job_id, at_ms=1, vertices={"v": aggregate_vertex([ProcessorMetrics(index=0)])}
    )
    second = first.model_copy(update={"at_ms": 2, "final": True})
    publisher.publish(first)
    publisher.publish(second)
    assert publisher.latest(job_id) == second
    assert int(str(redis_client.ttl(keys.job_metrics(job_id)))) > 0
    entries: Any = redis_client.xrange(keys.job_events(job_id))
    assert [e[1]["kind"] for e in entries] == ["metrics", "metrics"]
    last = json.loads(entries[-1][1]["data"])
    assert last["final"] is True and last["vertices"]["v"]["processors"][0]["index"] == 0
    assert publisher.latest(uuid.uuid4()) is None


NOW_MS = 1_795_000_000_000  # 2026-11-18
DAY_MS = 24 * 3600 * 1000


def test_lag_is_against_the_wall_clock_only_while_event_time_is_near_it() -> None:
    live = VertexMetrics(coalesced_wm=NOW_MS - 1500, top_observed_wm=NOW_MS - 200)
    set_event_time(live, NOW_MS, (NOW_MS - 1000, NOW_MS - 2500))
    assert live.lag_ms == 1500
    assert live.event_time_per_s == 1000.0  # as fast as the clock
    assert live.event_time_gap_ms == 1300

    # A stream over 1970's timestamps: "lag 20782 d" meant nothing. It says how fast event
    # time goes and how far the watermark is behind the newest one seen instead.
    replayed = VertexMetrics(coalesced_wm=3_000_000, top_observed_wm=3_000_700)
    set_event_time(replayed, NOW_MS, (NOW_MS - 500, 1_000_000))
    assert replayed.lag_ms is None
    assert replayed.event_time_per_s == 4_000_000.0
    assert replayed.event_time_gap_ms == 700

    # Event time ahead of the clock by more than a day is not lag either; a watermark that
    # did not move has a pace of 0; without a previous document there is no pace yet.
    ahead = VertexMetrics(coalesced_wm=NOW_MS + 2 * DAY_MS)
    set_event_time(ahead, NOW_MS, (NOW_MS - 1000, NOW_MS + 2 * DAY_MS))
    assert ahead.lag_ms is None and ahead.event_time_per_s == 0.0
    assert ahead.event_time_gap_ms is None  # no top observed watermark
    first = VertexMetrics(coalesced_wm=NOW_MS - DAY_MS)
    set_event_time(first, NOW_MS, None)
    assert first.lag_ms == DAY_MS and first.event_time_per_s is None
