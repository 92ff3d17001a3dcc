"""A real uvicorn serving the app against the session's PostgreSQL and Redis."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from _pytest.nodeid import NodeId
from fastapi import FastAPI
from pyspark.sql import SparkSession
from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker

from api.app import create_app
from jetspark.queue.keys import Keys
from jetspark.settings import ApiSettings, JdbcSettings, KafkaSettings, WorkerSettings
from tests.live_server import live_server
from worker.engine import run_job
from worker.loop import Worker


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Give each schemathesis operation test its own node id. Schemathesis names them
    ``test[GET /path]`` but leaves every node id at the bare function's, and pytest-xdist
    runs one item per node id: with two processes only the first operation was fuzzed."""
    for item in items:
        if type(item).__name__ == "SchemathesisFunction" and not item.nodeid.endswith("]"):
            # pytest 9 keeps the id structured (``Node._id``); schemathesis sets the old field
            item._id = NodeId.parse(f"{item.nodeid}[{item.name.partition('[')[2]}")


TOKEN = "test-token-1"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "word-count.json"
WAREHOUSE = {"url": "jdbc:postgresql://127.0.0.1:5432/test", "principals": ["*"]}
EVENTS = {"bootstrap": "127.0.0.1:9", "topics": {"*": ["clicks", "clicks-per-second"]}}
"""The Kafka cluster examples/kafka-windows.json names (no broker: only validated here)."""


@pytest.fixture(scope="session")
def api_app(database_url: str, redis_url: str, redis_namespace: str) -> FastAPI:
    return create_app(
        database_url=database_url,
        redis_url=redis_url,
        redis_namespace=redis_namespace,
        api_settings=ApiSettings(tokens=[TOKEN], max_body_bytes=64 * 1024),
        # The connection examples/table-etl.json names and the Kafka cluster and topics of
        # examples/kafka-windows.json, so those examples are accepted as the SDK (which knows
        # no operator's connections or clusters) accepts them.
        jdbc_settings=JdbcSettings(connections=json.dumps({"warehouse": WAREHOUSE})),
        kafka_settings=KafkaSettings(clusters=json.dumps({"events": EVENTS})),
    )


@pytest.fixture(scope="session")
def api_url(api_app: FastAPI) -> Iterator[str]:
    with live_server(api_app) as url:
        yield url


@pytest.fixture
def http(api_url: str) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=api_url, headers=headers, timeout=30) as client:
        yield client


@pytest.fixture
def word_count() -> dict[str, Any]:
    body: dict[str, Any] = json.loads(EXAMPLE.read_text())
    return copy.deepcopy(body)


@pytest.fixture
def worker(
    spark: SparkSession, db_engine: Engine, redis_url: str, redis_namespace: str
) -> Iterator[Worker]:
    """A real worker on the API's namespace, running in a thread for this test."""
    running = Worker(
        spark=spark,
        sessions=sessionmaker(db_engine, expire_on_commit=False),
        client=redis.Redis.from_url(redis_url, decode_responses=True),
        keys=Keys(redis_namespace),
        engine_run=run_job,
        settings=WorkerSettings(lease_s=5, heartbeat_s=0.2, poll_block_ms=100),
    )
    thread = threading.Thread(target=running.run, name="page-worker", daemon=True)
    thread.start()
    yield running
    running.stop()
    thread.join(timeout=30)
    running.stop_running_jobs()
