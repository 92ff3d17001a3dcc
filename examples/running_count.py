"""A custom Python processor with state kept in snapshots: a running count per key.

``RunningCount`` (``jetspark/example_processors/streaming.py``, on the workers' path and allowed by
``JETSPARK_DAG_ALLOWED_PYTHON_MODULES``) emits ``{key, count}`` per item: how many items of
that key it has seen so far. A stream runs fresh processor instances every epoch, so the
counts live in its snapshot: ``save_to_snapshot`` offers ``(key, count)`` entries and
``restore_from_snapshot`` takes them back. The partitioned edge sends a key's items, and its
snapshot entries, to one processor. Exactly-once: every count 1..n appears once per key.
"""

from __future__ import annotations

from jetspark.sdk import DAG, Edge
from launcher.script import main

EVENTS = 300
KEYS = 3


def build() -> DAG:
    dag = DAG(
        "running-count",
        {"members": 1, "local_parallelism": 2, "processing_guarantee": "exactly_once",
         "snapshot_interval_ms": 300},
    )  # fmt: skip
    events = dag.new_vertex("events", "source.sequence", count=EVENTS, rate_per_s=300)
    keyed = dag.new_vertex("keyed", "map", select={"key": f"concat('k', string(seq % {KEYS}))"})
    counts = dag.new_vertex(
        "counts", "python", **{"class": "jetspark.example_processors.streaming:RunningCount"},
        args={"key": "key"},
    )  # fmt: skip
    dag.edge(Edge.between(events, keyed))
    dag.edge(Edge.between(keyed, counts).partitioned("key").distributed())
    dag.edge(Edge.between(counts, dag.new_vertex("out", "sink.results")))
    return dag


if __name__ == "__main__":
    main(build())
