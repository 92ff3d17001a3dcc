"""Shared fixtures: real PostgreSQL, real Redis and one SparkSession per test session.

Servers come from ``JETSPARK_TEST_DATABASE_URL`` / ``JETSPARK_TEST_REDIS_URL`` when set, else
from the embedded servers ``jetspark up`` uses. Each test session gets its own freshly migrated
database and its own Redis namespace, so concurrent runs never see each other's rows or keys.
"""

from __future__ import annotations

import fcntl
import os
import sys
import tempfile
import uuid
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import redis
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.engine import make_engine
from tests.databases import fresh_database
from tests.redis_cluster import redis_cluster  # noqa: F401  (a session fixture)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
# Tests read and write files in their tmp_path: the temporary directory is their data root.
os.environ.setdefault("JETSPARK_DATA_ROOTS", tempfile.gettempdir())
# The session's database is shared by every test module: a worker's retention sweep would
# delete other tests' finished jobs (beyond 1,000 of one principal). Retention's own tests
# give their settings explicitly, on a database of their own.
os.environ.setdefault("JETSPARK_RETENTION_ENABLED", "false")

RUN_ID = uuid.uuid4().hex[:10]
LOCKS = Path(tempfile.gettempdir())


@pytest.hookimpl(tryfirst=True, wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """One test at a time, across pytest-xdist's processes, starts worker processes of its own
    (``start_worker``): each is written for two cores' worth of Spark JVMs starting, warming up
    and being killed, and four starting at once missed a 300 s cold-start deadline. The lock
    is taken before pytest-timeout's timer starts: waiting is not the test's own time."""
    workerinput = getattr(item.config, "workerinput", None)
    if workerinput is None or "start_worker" not in getattr(item, "fixturenames", ()):
        return (yield)
    lock = LOCKS / f"jetspark-tests-{workerinput['testrunuid']}-worker-processes.lock"
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # blocks while the other process's test runs
        return (yield)  # closing the file releases the lock


@pytest.fixture(scope="session")
def server_database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a PostgreSQL server's maintenance database."""
    given = os.environ.get("JETSPARK_TEST_DATABASE_URL")
    if given:
        yield given
        return
    from jetspark.embedded.postgres import EmbeddedPostgres, remove_data

    data = tmp_path_factory.mktemp("pg") / "data"
    server = EmbeddedPostgres(data)
    yield server.start()
    server.stop()
    remove_data(data)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    given = os.environ.get("JETSPARK_TEST_REDIS_URL")
    if given:
        yield given
        return
    from jetspark.embedded.redis import EmbeddedRedis

    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"))
    yield server.start()
    server.stop()


@pytest.fixture(scope="session")
def redis_namespace() -> str:
    return f"jetspark-test-{RUN_ID}"


@pytest.fixture(scope="session")
def database_url(server_database_url: str) -> Iterator[str]:
    """A fresh database, migrated to head, dropped at the end of the session."""
    with fresh_database(server_database_url, f"jetspark_test_{RUN_ID}") as url:
        yield url


@pytest.fixture(scope="session")
def db_engine(database_url: str) -> Iterator[Engine]:
    engine = make_engine(database_url, pool_size=5)
    yield engine
    engine.dispose()


@pytest.fixture
def db_session(db_engine: Engine) -> Iterator[Session]:
    with sessionmaker(db_engine, expire_on_commit=False)() as session:
        yield session


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """The one SparkSession of the test session: local[2], on loopback."""
    from jetspark.spark_session import build_spark_session

    session = build_spark_session(
        master="local[2]", warehouse=tmp_path_factory.mktemp("spark-warehouse")
    )
    yield session
    session.stop()


@pytest.fixture
def artifacts_dir() -> Path:
    path = Path("test-artifacts")
    path.mkdir(exist_ok=True)
    return path
