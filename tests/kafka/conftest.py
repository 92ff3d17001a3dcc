"""The session's Kafka-protocol broker (``tests.kafka.broker``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kafka.broker import kafka_broker


@pytest.fixture(scope="session")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with kafka_broker(tmp_path_factory.mktemp("kafka") / "tansu.log") as bootstrap:
        yield bootstrap


import tests.cli.conftest  # noqa: E402, F401 - first: it imports worker_processes at its end
from tests.cli.worker_processes import (  # noqa: E402, F401 - fixtures, used by name
    keys,
    own_database_url,
    sessions,
    start_worker,
)
from tests.jdbc.conftest import connections, db, jdbc_database  # noqa: E402, F401 - fixtures
