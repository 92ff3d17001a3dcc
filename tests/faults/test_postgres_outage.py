"""PostgreSQL restarted under a running exactly-once stream: the API answers 503
problem+json meanwhile, the workers wait it out, and the stream completes with exact
windows."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pyspark.sql import SparkSession
from sqlalchemy.orm import Session, sessionmaker

from api.app import create_app
from jetspark.db.engine import make_engine
from jetspark.queue.keys import Keys
from jetspark.redis_client import fail_fast
from jetspark.settings import ApiSettings
from tests.faults.conftest import OwnPostgres, OwnRedis
from tests.faults.test_worker_faults import SETTINGS, Running, committed_snapshots, read_job
from tests.live_server import live_server
from tests.worker.test_streaming import assert_exact_windows, windowed_stream
from worker.engine import run_job
from worker.loop import Worker

pytestmark = [pytest.mark.spark, pytest.mark.timeout(600)]

TOKEN = "faults-pg"


@pytest.fixture
def sessions(own_database_url: str) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(own_database_url, pool_size=4)
    yield sessionmaker(engine, expire_on_commit=False)
    engine.dispose()


@pytest.fixture
def running() -> Iterator[Running]:
    made = Running()
    yield made
    made.stop()


def test_postgresql_restarted_mid_stream(
    spark: SparkSession,
    own_database_url: str,
    own_postgres: OwnPostgres,
    own_redis: OwnRedis,
    sessions: sessionmaker[Session],
    running: Running,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "300")
    keys = Keys(f"faults-pg-{uuid.uuid4().hex[:6]}")
    client = fail_fast(own_redis.url)
    app = create_app(
        database_url=own_database_url,
        redis_url=own_redis.url,
        redis_namespace=keys.namespace,
        api_settings=ApiSettings(tokens=[TOKEN]),
    )
    with (
        live_server(app) as url,
        httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
        ) as http,
    ):
        created = http.post("/v1/jobs", json=windowed_stream("pg", count=4000, members=1))
        assert created.status_code == 201, created.text
        job_id = uuid.UUID(created.json()["id"])
        running.start(
            Worker(
                spark=spark,
                sessions=sessions,
                client=client,
                keys=keys,
                engine_run=run_job,
                settings=SETTINGS,
                worker_id="pg-worker",
            )
        )
        deadline = time.monotonic() + 180
        while committed_snapshots(sessions, job_id) < 2:
            assert time.monotonic() < deadline, "no snapshots"
            time.sleep(0.2)  # polling the worker's progress, with a deadline
        own_postgres.stop()
        try:
            answers: list[Any] = []
            deadline = time.monotonic() + 30
            while not answers or answers[-1].status_code != 503:
                answers.append(http.get(f"/v1/jobs/{job_id}"))
                assert answers[-1].status_code in {200, 503}, answers[-1].text
                assert time.monotonic() < deadline, "the outage never showed"
                time.sleep(0.1)  # polling the API for the outage, with a deadline
            down = answers[-1]
            assert down.headers["content-type"] == "application/problem+json"
            assert down.headers["retry-after"] and "PostgreSQL" in down.json()["detail"]
            assert running.all_alive()
        finally:
            own_postgres.start()
        deadline = time.monotonic() + 300
        while read_job(sessions, job_id).status not in {"COMPLETED", "FAILED"}:
            assert time.monotonic() < deadline, "the stream did not end"
            time.sleep(0.5)  # polling the worker's progress, with a deadline
        assert running.all_alive(), "a worker died of the outage"
        job = read_job(sessions, job_id)
        assert job.status == "COMPLETED", (job.error_type, job.error_message)
        assert_exact_windows(sessions, job_id, 4000)
        assert http.get(f"/v1/jobs/{job_id}").json()["status"] == "COMPLETED"
    client.close()
