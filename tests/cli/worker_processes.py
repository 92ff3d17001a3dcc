"""Real `jetspark worker` processes for the tests: started, watched, killed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from sqlalchemy.orm import Session, sessionmaker

from jetspark.dag.model import JobSpec
from jetspark.db.engine import make_engine
from jetspark.db.tables import Job
from jetspark.jdbc.connections import JdbcConnections
from jetspark.jobs import service
from jetspark.kafka.clusters import KafkaClusters
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from jetspark.settings import DagLimits
from tests.cli.conftest import JETSPARK, log_of, poll, process_env
from tests.databases import fresh_database

COLD_START_DEADLINE_S = 300.0  # two Spark JVMs starting and warming up at once on two cores
LEASE_S = 3


@dataclass
class WorkerProcess:
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def owns(self, worker_id: str | None) -> bool:
        """Worker ids are ``host:pid:random``."""
        return worker_id is not None and worker_id.split(":")[1] == str(self.pid)


@pytest.fixture
def keys(redis_namespace: str) -> Keys:
    return Keys(f"{redis_namespace}-proc-{uuid.uuid4().hex[:6]}")


@pytest.fixture
def own_database_url(server_database_url: str) -> Iterator[str]:
    with fresh_database(server_database_url, "jetspark_proc") as url:
        yield url


@pytest.fixture
def sessions(own_database_url: str) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(own_database_url, pool_size=2)
    yield sessionmaker(engine, expire_on_commit=False)
    engine.dispose()


@pytest.fixture
def start_worker(
    own_database_url: str, redis_url: str, keys: Keys, tmp_path: Path
) -> Iterator[Callable[..., WorkerProcess]]:
    started: list[WorkerProcess] = []
    env = process_env(
        JETSPARK_DATABASE_URL=own_database_url,
        JETSPARK_REDIS_URL=redis_url,
        JETSPARK_REDIS_NAMESPACE=keys.namespace,
        JETSPARK_WORKER_LEASE_S=str(LEASE_S),
        JETSPARK_WORKER_HEARTBEAT_S="0.5",
        JETSPARK_WORKER_POLL_BLOCK_MS="200",
        JETSPARK_WORKER_MAX_CONCURRENT_JOBS="1",
        JETSPARK_SPARK_MASTER="local[1]",
    )

    def start(name: str, **settings: str) -> WorkerProcess:
        log = tmp_path / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [JETSPARK, "worker"],
                env=env | settings,
                cwd=tmp_path,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: the teardown can take its JVM too
            )
        started.append(WorkerProcess(process, log))
        return started[-1]

    yield start
    for worker in started:
        if worker.process.poll() is None:
            worker.process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.process.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)  # whatever is left of its group


def submit(
    sessions: sessionmaker[Session],
    client: redis.Redis,
    keys: Keys,
    body: dict[str, object],
    settings: Mapping[str, str] | None = None,
) -> uuid.UUID:
    """Accept ``body`` as the API would (JDBC connections and Kafka clusters named by the
    workers' ``settings``: this process's environment does not hold them) and announce it."""
    settings = settings or {}
    with sessions() as session:
        job = service.submit_job(
            session,
            spec=JobSpec.model_validate(body),
            limits=DagLimits(),
            connections=JdbcConnections.parse(settings.get("JETSPARK_JDBC_CONNECTIONS")),
            clusters=KafkaClusters.parse(settings.get("JETSPARK_KAFKA_CLUSTERS")),
        )
        stream.announce(client, keys, job.job.id)
        return job.job.id


def read_job(sessions: sessionmaker[Session], job_id: uuid.UUID) -> Job:
    with sessions() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job


def job_when(
    sessions: sessionmaker[Session], job_id: uuid.UUID, ready: Callable[[Job], bool]
) -> Callable[[], Job | None]:
    """A probe for :func:`poll`: the job once ``ready(job)`` holds."""

    def probe() -> Job | None:
        job = read_job(sessions, job_id)
        return job if ready(job) else None

    return probe


def heartbeating(client: redis.Redis, keys: Keys, workers: list[WorkerProcess]) -> bool:
    """Every worker has built its SparkSession and entered its loop (it heartbeats)."""
    for worker in workers:
        assert worker.process.poll() is None, f"worker exited:\n{log_of(worker.log)}"
    found = [key.split(":")[-2] for key in client.scan_iter(keys.worker_heartbeat("*"))]
    return all(str(worker.pid) in found for worker in workers)


def wait_heartbeating(client: redis.Redis, keys: Keys, workers: list[WorkerProcess]) -> None:
    """Until every worker heartbeats (its JVM started, warmed up); at the deadline, fail with
    each worker's log, which says where its start stopped."""
    try:
        poll(
            lambda: heartbeating(client, keys, workers),
            deadline_s=COLD_START_DEADLINE_S,
            what=f"{len(workers)} worker(s) heartbeating",
            every_s=0.5,
        )
    except AssertionError as error:
        logs = "\n".join(f"--- {worker.log.name}:\n{log_of(worker.log)}" for worker in workers)
        raise AssertionError(f"{error}\n{logs}") from None
