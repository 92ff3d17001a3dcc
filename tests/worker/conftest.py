"""Workers in this process, driven step by step, against the session's services and Spark."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from pyspark.sql import SparkSession
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.dag.model import JobSpec
from jetspark.db.tables import Job, JobTransition
from jetspark.jobs import service
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient
from jetspark.settings import DagLimits, WorkerSettings
from tests.databases import fresh_engine
from worker.engine import run_job
from worker.loop import Worker

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "word-count.json"
FAST = WorkerSettings(
    lease_s=2, heartbeat_s=0.2, poll_block_ms=100, reconcile_interval_s=3600, max_concurrent_jobs=2
)

LONG_JOB: dict[str, Any] = {
    "name": "long",
    "dag": {
        "vertices": [
            {"name": "numbers", "processor": "source.sequence", "params": {"count": 10**12}},
            {"name": "log", "processor": "sink.logger"},
        ],
        "edges": [{"from": "numbers", "to": "log"}],
    },
    "config": {"members": 1, "local_parallelism": 1},
}


@pytest.fixture(scope="module")
def worker_db_engine(server_database_url: str) -> Iterator[Engine]:
    """The worker tests' own database: their reconcilers re-announce every queued job they
    see, so jobs other tests left queued must not be there."""
    with fresh_engine(server_database_url, "jetspark_worker", pool_size=5) as engine:
        yield engine


@pytest.fixture
def sessions(worker_db_engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(worker_db_engine, expire_on_commit=False)


@pytest.fixture
def keys(redis_namespace: str) -> Keys:
    return Keys(f"{redis_namespace}-{uuid.uuid4().hex[:6]}")


@pytest.fixture
def worker_redis(redis_client: redis.Redis) -> RedisClient:
    """The Redis the workers and ``submit`` use: the session's one; a module overrides it
    (the Redis Cluster tests)."""
    return redis_client


@pytest.fixture
def make_worker(
    spark: SparkSession, sessions: sessionmaker[Session], worker_redis: RedisClient, keys: Keys
) -> Iterator[Callable[..., Worker]]:
    made: list[Worker] = []

    def make(worker_id: str, settings: WorkerSettings = FAST) -> Worker:
        worker = Worker(
            spark=spark,
            sessions=sessions,
            client=worker_redis,
            keys=keys,
            engine_run=run_job,
            settings=settings,
            worker_id=worker_id,
        )
        stream.ensure_group(worker_redis, keys)
        made.append(worker)
        return worker

    yield make
    for worker in made:
        worker.stop_running_jobs()
        worker.pool.shutdown(wait=True)


@pytest.fixture
def submit(
    sessions: sessionmaker[Session], worker_redis: RedisClient, keys: Keys
) -> Callable[[dict[str, Any]], uuid.UUID]:
    def submit_body(body: dict[str, Any]) -> uuid.UUID:
        with sessions() as session:
            job = service.submit_job(
                session, spec=JobSpec.model_validate(body), limits=DagLimits()
            ).job
            stream.announce(worker_redis, keys, job.id)
            return job.id

    return submit_body


def word_count_body() -> dict[str, Any]:
    body: dict[str, Any] = json.loads(EXAMPLE.read_text())
    return body


def causes(sessions: sessionmaker[Session], job_id: uuid.UUID) -> list[str]:
    """The causes of a job's status changes, oldest first."""
    with sessions() as session:
        rows = session.execute(
            select(JobTransition.cause)
            .where(JobTransition.job_id == job_id)
            .order_by(JobTransition.id)
        )
        return list(rows.scalars())


def status_of(sessions: sessionmaker[Session], job_id: uuid.UUID) -> str:
    with sessions() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job.status


def drive_until(
    workers: list[Worker], done: Callable[[], bool], *, deadline_s: float = 120, what: str = ""
) -> None:
    """Step the workers until ``done()``; fail after the deadline."""
    deadline = time.monotonic() + deadline_s
    while not done():
        assert time.monotonic() < deadline, f"not reached within {deadline_s}s: {what}"
        for worker in workers:
            worker.step()
