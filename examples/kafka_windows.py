"""A Kafka topic into keyed tumbling windows into a Kafka topic, under exactly-once snapshots.

``clicks`` reads the topic ``clicks`` of the operator's Kafka cluster ``events``
(``JETSPARK_KAFKA_CLUSTERS``: the DAG names the cluster and topics, never a broker; the
submitting principal must be allowed both topics there). Each record's value is JSON such
as ``{"user": "u1"}`` and its event time is the record's timestamp (``ts``): the source emits
watermarks per Kafka partition, the minimum over its partitions that are not idle (a
partition without records for ``idle_timeout_ms`` is left out), so a quiet partition does not
hold the windows back. ``per_second`` counts each user's clicks in 1 s tumbling windows,
closed when the watermark passes their end (straight after the source: one Spark job reads
the records, computes the windows and observes the watermarks); ``to_topic`` writes each
window as a JSON record keyed by the user to ``clicks-per-second``.

Under ``exactly_once`` the Kafka offsets, the partitions' watermarks and the open windows are
kept in the same snapshots: a restarted job reads every record once and computes every window
once. ``sink.kafka``'s idempotent producer is at-least-once: an epoch replayed after a lost
worker produces its windows again (a transactional sink is not built: see SPEC §5).

    python examples/kafka_windows.py           # the JSON body (= kafka-windows.json)
    python examples/kafka_windows.py --submit  # submit it to JETSPARK_URL (it never ends)
"""

from __future__ import annotations

from jetspark.sdk import DAG, Edge
from launcher.script import main

CLUSTER = "events"
SOURCE, TARGET = "clicks", "clicks-per-second"
IDLE_TIMEOUT_MS = 2000
USER = "get_json_object(value, '$.user')"
"""The window's key: the user in the record's JSON value."""


def build() -> DAG:
    dag = DAG(
        "kafka-windows",
        {
            "members": 1,
            "local_parallelism": 2,
            "processing_guarantee": "exactly_once",
            "snapshot_interval_ms": 1000,
        },
    )
    clicks = dag.new_vertex(
        "clicks", "source.kafka",
        cluster=CLUSTER, topics=[SOURCE], start="earliest", idle_timeout_ms=IDLE_TIMEOUT_MS,
    )  # fmt: skip
    per_second = dag.new_vertex(
        "per_second", "window",
        timestamp="ts", type="tumbling", size_ms=1000, key=USER,
        aggregations={"clicks": "count(*)"},
    )  # fmt: skip
    to_topic = dag.new_vertex("to_topic", "sink.kafka", cluster=CLUSTER, topic=TARGET, key="key")
    dag.edge(Edge.between(clicks, per_second).partitioned(USER).distributed())
    dag.edge(Edge.between(per_second, to_topic))
    return dag


if __name__ == "__main__":
    main(build())
