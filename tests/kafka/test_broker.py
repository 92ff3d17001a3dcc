"""What the test broker does with the client the project uses: the Kafka tests rely on it."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
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


def test_transactions_fence_and_take_offsets_but_aborted_records_stay_readable(kafka: str) -> None:
    """Why ``sink.kafka`` is not transactional (SPEC §5): what a sink would need of the broker
    for exactly-once, each step on its own. The last one fails on Tansu: a ``read_committed``
    consumer reads the records of an aborted transaction (an attempt lost mid-epoch would
    leave its records readable beside the replay's). Should a Tansu release filter them, this
    test fails here and the transactional sink can be built."""
    topic, marker = create_topic(kafka, 1), create_topic(kafka, 1)
    group = Consumer({"bootstrap.servers": kafka, "group.id": f"g-{topic}"})
    producer = Producer({"bootstrap.servers": kafka, "transactional.id": f"a-{topic}"})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, value=b"kept", partition=0)
    # The epoch published, committed atomically with the records: the marker's offset.
    metadata = group.consumer_group_metadata()
    producer.send_offsets_to_transaction([TopicPartition(marker, 0, 7)], metadata, 30)
    producer.commit_transaction(30)
    [committed] = group.committed([TopicPartition(marker, 0)], timeout=30)
    assert committed.offset == 7
    producer.begin_transaction()
    producer.produce(topic, value=b"lost", partition=0)
    assert producer.flush(30) == 0
    assert read_all(kafka, topic, 1) == [(0, b"kept")]  # an open transaction is not read
    again = Producer({"bootstrap.servers": kafka, "transactional.id": f"a-{topic}"})
    again.init_transactions(30)  # the next attempt: fences the lost one, aborts its records
    with pytest.raises(KafkaException):
        producer.commit_transaction(10)
    group.close()
    # Kafka would read [(0, b"kept")] here.
    assert read_all(kafka, topic, 1) == [(0, b"kept"), (0, b"lost")]
