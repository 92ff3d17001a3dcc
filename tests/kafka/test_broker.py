"""What the test broker does with the client the project uses: the Kafka tests rely on it."""

from __future__ import annotations

import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]


def create_topic(bootstrap: str, partitions: int = 3) -> str:
    topic = f"t-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, num_partitions=partitions)]).values():
        future.result(timeout=30)
    return topic


def read_all(bootstrap: str, topic: str, partitions: int) -> list[tuple[int, bytes]]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
         "isolation.level": "read_committed"}
    )  # fmt: skip
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen: list[tuple[int, bytes]] = []
    empty = 0
    while empty < 5:
        message = consumer.poll(1.0)
        if message is None:
            empty += 1
            continue
        assert message.error() is None, message.error()
        seen.append((int(message.partition() or 0), bytes(message.value() or b"")))
    consumer.close()
    return seen


def test_topics_idempotent_and_transactional_produce_and_assigned_reads(kafka: str) -> None:
    topic = create_topic(kafka)
    producer = Producer({"bootstrap.servers": kafka, "enable.idempotence": True})
    for i in range(30):
        producer.produce(topic, value=f"v{i}".encode(), partition=i % 3)
    assert producer.flush(30) == 0
    transactional = Producer({"bootstrap.servers": kafka, "transactional.id": f"x-{topic}"})
    transactional.init_transactions(30)
    transactional.begin_transaction()
    transactional.produce(topic, value=b"committed", partition=0)
    transactional.commit_transaction(30)
    seen = read_all(kafka, topic, 3)
    assert sorted(v for _, v in seen) == sorted(
        [f"v{i}".encode() for i in range(30)] + [b"committed"]
    )
    assert {p for p, _ in seen} == {0, 1, 2}
