"""A stream joined with a table: each reading enriched with its sensor's room.

The built-in ``hash_join`` joins what arrives in one epoch, so in a stream a table read in
the first epoch would not meet the readings of later ones. ``LookupEnricher``
(``jetspark/example_processors/enrich.py``) keeps the table as state instead: ordinal 0 (priority
-1) brings the table ``{key, value}``, ordinal 1 the stream ``{key}``; the table is saved in
every snapshot and restored in each epoch's fresh processors. Both edges are partitioned on
the key, so a sensor's readings meet its table row on one processor.
"""

from __future__ import annotations

from jetspark.sdk import DAG, Edge
from launcher.script import main

ROOMS = {"s0": "kitchen", "s1": "hall", "s2": "attic"}
READINGS = 90


def build() -> DAG:
    dag = DAG(
        "stream-table-join",
        {"members": 1, "local_parallelism": 2, "processing_guarantee": "exactly_once",
         "snapshot_interval_ms": 300},
    )  # fmt: skip
    rooms = dag.new_vertex(
        "rooms", "source.items", items=[{"key": k, "value": v} for k, v in ROOMS.items()]
    )
    ticks = dag.new_vertex("ticks", "source.sequence", count=READINGS, rate_per_s=90)
    readings = dag.new_vertex(
        "readings", "map", select={"key": f"concat('s', string(seq % {len(ROOMS)}))"}
    )
    enrich = dag.new_vertex(
        "enrich", "python", **{"class": "jetspark.example_processors.enrich:LookupEnricher"}
    )
    dag.edge(Edge.between(ticks, readings))
    dag.edge(Edge.from_(rooms).to(enrich, 0).partitioned("key").priority(-1))
    dag.edge(Edge.from_(readings).to(enrich, 1).partitioned("key"))
    dag.edge(Edge.between(enrich, dag.new_vertex("out", "sink.results")))
    return dag


if __name__ == "__main__":
    main(build())
