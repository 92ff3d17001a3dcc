"""Workers through outages and bad endings, on real servers: Redis restarted empty under a
running stream and queued batch jobs, ``config.timeout_s``, an error text PostgreSQL refuses."""

from __future__ import annotations

import contextlib
import copy
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from pyspark.sql import SparkSession
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from jetspark.dag.model import JobSpec
from jetspark.db.tables import Job
from jetspark.jobs import service
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient, fail_fast
from jetspark.settings import DagLimits, WorkerSettings
from tests.databases import fresh_engine
from tests.faults.conftest import OwnRedis
from tests.worker.conftest import LONG_JOB
from tests.worker.test_streaming import assert_exact_windows, windowed_stream
from worker.engine import run_job
from worker.engine.contract import JobControl, JobOutcome, RunnableJob
from worker.loop import Worker

pytestmark = [pytest.mark.spark, pytest.mark.timeout(600)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "word-count.json"
SETTINGS = WorkerSettings(
    lease_s=4,
    heartbeat_s=0.3,
    poll_block_ms=200,
    reconcile_interval_s=1,
    reannounce_after_s=5,
    max_concurrent_jobs=2,
)


@pytest.fixture
def engine(server_database_url: str) -> Iterator[Engine]:
    with fresh_engine(server_database_url, "jetspark_faults", pool_size=4) as made:
        yield made


@pytest.fixture
def sessions(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@pytest.fixture
def keys() -> Keys:
    return Keys(f"faults-{uuid.uuid4().hex[:6]}")


@pytest.fixture
def client(own_redis: OwnRedis) -> Iterator[RedisClient]:
    made = fail_fast(own_redis.url)
    yield made
    made.close()


class Running:
    """Workers each looping in a thread of their own (``Worker.run``), as in production."""

    def __init__(self) -> None:
        self.workers: list[Worker] = []
        self.threads: list[threading.Thread] = []

    def start(self, worker: Worker) -> Worker:
        thread = threading.Thread(target=worker.run, name=f"worker-{worker.id}", daemon=True)
        thread.start()
        self.workers.append(worker)
        self.threads.append(thread)
        return worker

    def all_alive(self) -> bool:
        return all(thread.is_alive() for thread in self.threads)

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()
        for thread in self.threads:
            thread.join(timeout=60)
        for worker in self.workers:
            worker.stop_running_jobs()
            worker.pool.shutdown(wait=True)
            worker.close()


@pytest.fixture
def running() -> Iterator[Running]:
    made = Running()
    yield made
    made.stop()


@pytest.fixture
def make_worker(
    spark: SparkSession, sessions: sessionmaker[Session], client: redis.Redis, keys: Keys
) -> Callable[..., Worker]:
    def make(name: str, *, engine_run: Any = run_job, **settings: Any) -> Worker:
        return Worker(
            spark=spark,
            sessions=sessions,
            client=client,
            keys=keys,
            engine_run=engine_run,
            settings=SETTINGS.model_copy(update=settings),
            worker_id=name,
        )

    return make


def submit(
    sessions: sessionmaker[Session], client: redis.Redis, keys: Keys, body: dict[str, Any]
) -> uuid.UUID:
    """As the API does: PostgreSQL first; an announce Redis could not take is left to the
    reconciler."""
    with sessions() as session:
        job = service.submit_job(session, spec=JobSpec.model_validate(body), limits=DagLimits()).job
        with contextlib.suppress(redis.RedisError):
            stream.announce(client, keys, job.id)
        return job.id


def read_job(sessions: sessionmaker[Session], job_id: uuid.UUID) -> Job:
    with sessions() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job


def wait_for(done: Callable[[], bool], *, deadline_s: float, what: str) -> None:
    deadline = time.monotonic() + deadline_s
    while not done():
        assert time.monotonic() < deadline, f"not within {deadline_s} s: {what}"
        time.sleep(0.2)  # polling PostgreSQL for the workers' progress, with a deadline


def word_count() -> dict[str, Any]:
    body: dict[str, Any] = json.loads(EXAMPLE.read_text())
    return copy.deepcopy(body)


def committed_snapshots(sessions: sessionmaker[Session], job_id: uuid.UUID) -> int:
    job = read_job(sessions, job_id)
    return int((job.last_snapshot or {}).get("snapshot_id", 0))


def test_redis_restarted_empty_under_a_stream_and_queued_jobs(
    make_worker: Callable[..., Worker],
    running: Running,
    sessions: sessionmaker[Session],
    client: redis.Redis,
    keys: Keys,
    own_redis: OwnRedis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "300")
    streamed = submit(sessions, client, keys, windowed_stream("stream", count=4000, members=1))
    running.start(make_worker("a"))
    running.start(make_worker("b"))
    wait_for(lambda: committed_snapshots(sessions, streamed) >= 2, deadline_s=180, what="snapshots")
    batch = [submit(sessions, client, keys, word_count()) for _ in range(3)]

    def while_down() -> None:
        batch.extend(submit(sessions, client, keys, word_count()) for _ in range(3))
        assert running.all_alive()

    own_redis.restart_empty(during=while_down)
    every = [streamed, *batch]
    wait_for(
        lambda: all(read_job(sessions, j).status in {"COMPLETED", "FAILED"} for j in every),
        deadline_s=400,
        what="every accepted job ended",
    )
    assert running.all_alive(), "a worker died of the outage"
    for job_id in batch:
        job = read_job(sessions, job_id)
        assert job.status == "COMPLETED", (job.error_type, job.error_message)
    stream_job = read_job(sessions, streamed)
    if stream_job.status == "FAILED":  # it had to restore a snapshot whose data Redis lost
        assert stream_job.error_type == "SnapshotLost", stream_job.error_message
        assert "snapshot" in (stream_job.error_message or "")
    else:
        assert_exact_windows(sessions, streamed, 4000)


def test_timeout_s_fails_a_batch_job_and_a_stream(
    make_worker: Callable[..., Worker],
    running: Running,
    sessions: sessionmaker[Session],
    client: redis.Redis,
    keys: Keys,
) -> None:
    endless = copy.deepcopy(LONG_JOB)
    endless["config"]["timeout_s"] = 2
    stream_body = windowed_stream("endless stream", count=None, members=1)
    stream_body["config"]["timeout_s"] = 3
    jobs = [submit(sessions, client, keys, body) for body in (endless, stream_body)]
    running.start(make_worker("t"))
    wait_for(
        lambda: all(read_job(sessions, j).status == "FAILED" for j in jobs),
        deadline_s=180,
        what="both jobs timed out",
    )
    for job_id in jobs:
        job = read_job(sessions, job_id)
        assert job.error_type == "JobTimeout"
        assert "timeout_s" in (job.error_message or "")


def test_an_error_text_with_nul_is_recorded_and_the_job_not_claimed_again(
    make_worker: Callable[..., Worker],
    running: Running,
    sessions: sessionmaker[Session],
    client: redis.Redis,
    keys: Keys,
) -> None:
    def failing(spark: SparkSession, job: RunnableJob, control: JobControl) -> JobOutcome:
        raise ValueError("bad byte \x00 in a record " + "x" * 10_000)

    job_id = submit(sessions, client, keys, word_count())
    running.start(make_worker("n", engine_run=failing))
    wait_for(lambda: read_job(sessions, job_id).status == "FAILED", deadline_s=60, what="FAILED")
    job = read_job(sessions, job_id)
    assert job.attempt == 1 and job.error_type == "ValueError"
    message = job.error_message or ""
    assert message.startswith("bad byte \\0 in a record") and len(message) <= 4000


def lose_the_snapshot(
    body: dict[str, Any],
    make_worker: Callable[..., Worker],
    running: Running,
    sessions: sessionmaker[Session],
    client: redis.Redis,
    keys: Keys,
    own_redis: OwnRedis,
) -> uuid.UUID:
    """Run ``body`` to its second snapshot, lose its worker and Redis's data, start another."""
    job_id = submit(sessions, client, keys, body)
    first = running.start(make_worker("first"))
    wait_for(lambda: committed_snapshots(sessions, job_id) >= 2, deadline_s=180, what="snapshots")
    first.stop()
    first.stop_running_jobs()  # lost with its worker: RUNNING until its lease runs out
    own_redis.restart_empty()  # ... and the snapshot's state with Redis
    running.start(make_worker("second"))
    return job_id


def test_a_lost_snapshot_of_a_replayable_stream_replays_it_exactly(
    make_worker: Callable[..., Worker],
    running: Running,
    sessions: sessionmaker[Session],
    client: redis.Redis,
    keys: Keys,
    own_redis: OwnRedis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "300")
    body = windowed_stream("replayed", count=3000, members=1)
    job_id = lose_the_snapshot(body, make_worker, running, sessions, client, keys, own_redis)
    wait_for(
        lambda: read_job(sessions, job_id).status in {"COMPLETED", "FAILED"},
        deadline_s=300,
        what="the job ended",
    )
    job = read_job(sessions, job_id)
    assert job.status == "COMPLETED", (job.error_type, job.error_message)
    assert_exact_windows(sessions, job_id, 3000)


def test_a_lost_snapshot_that_cannot_be_replayed_fails_the_job_naming_it(
    make_worker: Callable[..., Worker],
    running: Running,
    sessions: sessionmaker[Session],
    client: redis.Redis,
    keys: Keys,
    own_redis: OwnRedis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "300")
    body = windowed_stream("lost", count=None, members=1)
    body["config"]["processing_guarantee"] = "at_least_once"  # no replay promised
    job_id = lose_the_snapshot(body, make_worker, running, sessions, client, keys, own_redis)
    wait_for(lambda: read_job(sessions, job_id).status == "FAILED", deadline_s=180, what="FAILED")
    job = read_job(sessions, job_id)
    assert job.error_type == "SnapshotLost"
    assert f"of job {job_id}" in (job.error_message or "")
    assert "lost from Redis" in (job.error_message or "")


def test_a_stopping_worker_hands_its_stream_over_before_the_lease_runs_out(
    make_worker: Callable[..., Worker],
    running: Running,
    sessions: sessionmaker[Session],
    client: redis.Redis,
    keys: Keys,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What ``jetspark worker`` does on SIGTERM (``worker.main``): ``stop`` then ``drain``."""
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "300")
    lease_s = 120  # a handover that waited for the lease would miss every deadline below
    job_id = submit(sessions, client, keys, windowed_stream("handover", count=4000, members=1))
    first = running.start(make_worker("first", lease_s=lease_s))
    wait_for(lambda: committed_snapshots(sessions, job_id) >= 2, deadline_s=180, what="snapshots")
    first.stop()
    first.drain(grace_s=30)
    handed = read_job(sessions, job_id)
    assert handed.status == "QUEUED" and not first.held
    running.start(make_worker("second", lease_s=lease_s))
    wait_for(
        lambda: read_job(sessions, job_id).worker == "second",
        deadline_s=lease_s / 2,
        what="the second worker took the stream over",
    )
    wait_for(lambda: read_job(sessions, job_id).status == "COMPLETED", deadline_s=300, what="done")
    job = read_job(sessions, job_id)
    assert job.worker == "second" and job.attempt == 2
    assert_exact_windows(sessions, job_id, 4000)
