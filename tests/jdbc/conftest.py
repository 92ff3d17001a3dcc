"""A database of the module's own on the session's PostgreSQL server, a schema per test, and
the operator's connections to it; jobs run through the engine on the shared SparkSession."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from jetspark.db.engine import normalize_url
from jetspark.jdbc.connections import JdbcConnections
from jetspark.settings import JdbcSettings
from tests.databases import fresh_database
from worker.engine import JobControl, JobOutcome, RunnableJob, run_job
from worker.engine.contract import RedisTarget

PASSWORD_ENV = "JETSPARK_TEST_JDBC_PASSWORD"
ALICE, BOB = "alice", "bob"


@dataclass(frozen=True)
class Db:
    """The test's schema in the module's database."""

    engine: Engine
    jdbc_url: str
    user: str
    schema: str
    password: str

    def run(self, statement: str, **params: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(text(statement), params)

    def rows(self, query: str, **params: Any) -> list[tuple[Any, ...]]:
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(query), params)]

    def table(self, name: str) -> str:
        return f"{self.schema}.{name}"

    def connections_json(self, main: tuple[str, ...] = (ALICE,)) -> str:
        """``main`` for ``main`` (alice by default), ``theirs`` for bob."""
        entry = {"url": self.jdbc_url, "user": self.user, "password_env": PASSWORD_ENV}
        return json.dumps(
            {
                "main": {**entry, "principals": list(main)},
                "theirs": {**entry, "principals": [BOB]},
            }
        )


@pytest.fixture(scope="module")
def jdbc_database(server_database_url: str) -> Iterator[str]:
    if not any(Path(jar).is_file() for jar in JdbcSettings().driver_jars):
        pytest.skip("no PostgreSQL JDBC driver: `make jdbc-driver` installs it")
    with fresh_database(server_database_url, "jetspark_jdbc", migrated=False) as url:
        yield url


@pytest.fixture
def db(jdbc_database: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Db]:
    url = make_url(normalize_url(jdbc_database))
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    schema = f"t_{uuid.uuid4().hex[:10]}"
    password = f"pw-{uuid.uuid4().hex}"
    monkeypatch.setenv(PASSWORD_ENV, password)
    jdbc_url = f"jdbc:postgresql://{url.host or '127.0.0.1'}:{url.port or 5432}/{url.database}"
    database = Db(engine, jdbc_url, url.username or "postgres", schema, password)
    database.run(f'CREATE SCHEMA "{schema}"')
    try:
        yield database
    finally:
        database.run(f'DROP SCHEMA "{schema}" CASCADE')
        engine.dispose()


@pytest.fixture
def connections(db: Db) -> JdbcConnections:
    return JdbcConnections.parse(db.connections_json())


RunJdbc = Callable[..., JobOutcome]


def body(
    vertices: list[dict[str, Any]], edges: list[dict[str, Any]], **config: Any
) -> dict[str, Any]:
    return {"name": "jdbc", "dag": {"vertices": vertices, "edges": edges}, "config": config}


@pytest.fixture
def run_jdbc(
    spark: SparkSession, connections: JdbcConnections, redis_url: str, redis_namespace: str
) -> RunJdbc:
    """Validate, plan and run a job body as ``principal`` with the test's connections."""

    def run(
        job_body: dict[str, Any], *, principal: str = ALICE, job_id: uuid.UUID | None = None
    ) -> JobOutcome:
        spec = JobSpec.model_validate(job_body)
        plan = build_plan(validate_job(spec))
        job = RunnableJob(
            id=job_id or uuid.uuid4(),
            attempt=1,
            plan=plan.model_dump(mode="json"),
        )
        control = JobControl(
            job_group=f"job-{job.id}",
            job_id=job.id,
            cancelled=threading.Event(),
            redis=RedisTarget(redis_url, redis_namespace, principal),
            jdbc=connections,
        )
        return run_job(spark, plan, control)

    return run


# Real worker processes (``tests/cli``), for the SIGKILL test.
import tests.cli.conftest  # noqa: E402, F401 - first: it imports worker_processes at its end
from tests.cli.worker_processes import (  # noqa: E402, F401
    keys,
    own_database_url,
    sessions,
    start_worker,
)
