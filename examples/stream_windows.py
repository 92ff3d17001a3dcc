"""Clicks in event time: tumbling and session windows over one stream, exactly once.

``clicks`` is a rate-limited sequence (a stream: it runs in epochs). ``events`` gives each
click a user and an event time: bursts of 50 clicks 100 ms apart, a 5 s lull between bursts.
``stamped`` inserts watermarks; its two outbound edges (ordinals 0 and 1) get every item:
``per_second`` counts clicks per user in 1 s tumbling windows, ``sessions`` closes a user's
session after 1 s without a click. Both keep their open windows in snapshots, taken every
500 ms under exactly-once: a restarted job neither loses nor repeats a window.
"""

from __future__ import annotations

from jetspark.sdk import DAG, Edge
from launcher.script import main

CLICKS = 600
USERS = 4
BURST = 50


def build() -> DAG:
    dag = DAG(
        "stream-windows",
        {
            "members": 1,
            "local_parallelism": 2,
            "processing_guarantee": "exactly_once",
            "snapshot_interval_ms": 500,
        },
    )
    clicks = dag.new_vertex("clicks", "source.sequence", count=CLICKS, rate_per_s=400)
    events = dag.new_vertex(
        "events", "map",
        select={"user": f"seq % {USERS}", "ts": f"seq * 100 + (seq div {BURST}) * 5000"},
    )  # fmt: skip
    stamped = dag.new_vertex("stamped", "insert_watermarks", timestamp="ts", allowed_lag_ms=500)
    per_second = dag.new_vertex(
        "per_second", "window",
        timestamp="ts", type="tumbling", size_ms=1000, key="user",
        aggregations={"clicks": "count(*)"},
    )  # fmt: skip
    sessions = dag.new_vertex(
        "sessions", "window",
        timestamp="ts", type="session", gap_ms=1000, key="user",
        aggregations={"clicks": "count(*)", "first": "min(ts)", "last": "max(ts)"},
    )  # fmt: skip
    dag.edge(Edge.between(clicks, events))
    dag.edge(Edge.between(events, stamped))
    dag.edge(Edge.from_(stamped, 0).to(per_second).partitioned("user"))
    dag.edge(Edge.from_(stamped, 1).to(sessions).partitioned("user"))
    dag.edge(Edge.between(per_second, dag.new_vertex("per_second_out", "sink.results")))
    dag.edge(Edge.between(sessions, dag.new_vertex("sessions_out", "sink.results")))
    return dag


if __name__ == "__main__":
    main(build())
