"""Scale: the same work on local[2], on a Spark standalone cluster, and on two workers.

Run: ``make bench-scale`` (``.venv/bin/python -m bench.scale [--words N] [--seconds S]``),
under the test lock on a quiet machine. Three deployments, each of two cores, measured in one
run on real PostgreSQL and Redis (``JETSPARK_DATABASE_URL`` / ``JETSPARK_REDIS_URL``, else
the embedded servers), each with real ``jetspark worker`` processes started cold and warmed up:

- ``local[2]``: one worker, Spark inside it;
- ``standalone``: one worker on a standalone cluster of 2 workers x 1 core (executors 512m,
  code shipped by the worker, ``members`` = 2 executors);
- ``2 workers``: two workers on one queue, each ``local[1]``.

Figures, each also as a ratio to ``local[2]``:
1. word count: ``--jobs`` two-stage word counts of ``--words`` words (1,000 distinct) from a
   text file, submitted at once; words/s = all words / (first submit -> last COMPLETED);
2. tiny job latency: submit -> COMPLETED of a 3-item job, one at a time, median of
   ``--tiny`` (the extra latency of the cluster path);
3. streaming: two exactly-once windowed streams at once (unbounded ``source.sequence`` ->
   ``insert_watermarks`` -> tumbling window -> ``sink.logger``) for ``--seconds``; events/s
   = items the sources emitted over the committed epochs, summed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
from sqlalchemy.orm import Session, sessionmaker

from bench.engine_wordcount import word_count_job
from bench.processes import exit_on_sigterm
from bench.streaming import pipeline
from bench.submit_latency import fresh_database, services, transition_at
from jetspark.dag.model import JobSpec
from jetspark.db.engine import make_engine
from jetspark.db.tables import Job
from jetspark.jobs import service
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from jetspark.settings import DagLimits
from tests.standalone import standalone_cluster

JETSPARK = str(Path(sys.executable).with_name("jetspark"))
DISTINCT = 1000
WORDS_PER_LINE = 10
ENDED = {"COMPLETED", "FAILED", "CANCELLED"}


def text_file(directory: Path, words: int) -> Path:
    """``words`` words over ``DISTINCT`` keys, ten a line."""
    path = directory / f"words-{words}.txt"
    draw = random.Random(42)
    with path.open("w") as out:
        for _ in range(words // WORDS_PER_LINE):
            out.write(" ".join(f"w{draw.randrange(DISTINCT)}" for _ in range(WORDS_PER_LINE)))
            out.write("\n")
    return path


def word_count(path: Path) -> dict[str, Any]:
    # No members: the executors of the worker that claims it.
    return word_count_job(path, {}, name="scale-word-count")


TINY = {
    "name": "scale-tiny",
    "dag": {
        "vertices": [
            {"name": "items", "processor": "source.items",
             "params": {"items": [{"v": 1}, {"v": 2}, {"v": 3}]}},
            {"name": "sink", "processor": "sink.results"},
        ],
        "edges": [{"from": "items", "to": "sink"}],
    },
    "config": {},
}  # fmt: skip


def stream_job() -> dict[str, Any]:
    body = pipeline("exactly_once", rate=None, interval_ms=500)
    del body["config"]["members"]
    return body


@dataclass
class Deployment:
    """Workers of one deployment on their own queue namespace."""

    name: str
    keys: Keys
    sessions: sessionmaker[Session]
    client: redis.Redis
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def submit(self, body: dict[str, Any]) -> uuid.UUID:
        with self.sessions() as session:
            job = service.submit_job(
                session, spec=JobSpec.model_validate(body), limits=DagLimits()
            ).job
            stream.announce(self.client, self.keys, job.id)
            return job.id

    def job(self, job_id: uuid.UUID) -> Job:
        with self.sessions() as session:
            job = session.get(Job, job_id)
            assert job is not None
            return job

    def wait(self, job_id: uuid.UUID, ready: Callable[[Job], bool], deadline_s: float) -> Job:
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            job = self.job(job_id)
            if ready(job):
                return job
            time.sleep(0.05)  # polling the workers' database writes
        raise TimeoutError(f"{self.name}: job {job_id} not ready within {deadline_s} s")

    def completed(self, job_id: uuid.UUID, deadline_s: float = 600) -> Job:
        job = self.wait(job_id, lambda j: j.status in ENDED, deadline_s)
        if job.status != "COMPLETED":
            raise RuntimeError(f"{self.name}: job {job.status}: {job.error_message}")
        return job

    def cancel(self, job_id: uuid.UUID) -> None:
        with self.sessions() as session:
            service.request_transition(session, job_id=job_id, action="cancel")

    def heartbeating(self) -> bool:
        for process in self.processes:
            if process.poll() is not None:
                raise RuntimeError(f"{self.name}: a worker exited with {process.returncode}")
        found = {
            key.split(":")[-2] for key in self.client.scan_iter(self.keys.worker_heartbeat("*"))
        }
        return all(str(process.pid) in found for process in self.processes)


@contextmanager
def deployment(
    name: str,
    base_env: dict[str, str],
    workers: list[dict[str, str]],
    sessions: sessionmaker[Session],
    client: redis.Redis,
    logs: Path,
) -> Iterator[Deployment]:
    """Start ``workers`` (each an environment of its own), wait for their heartbeats, warm
    them up with a tiny job each; SIGTERM them when done."""
    slug = re.sub(r"[^a-z0-9]+", "-", name).strip("-")
    # No glob characters: the heartbeat keys are found with SCAN MATCH.
    keys = Keys(f"scale-{slug}-{uuid.uuid4().hex[:6]}")
    made = Deployment(name, keys, sessions, client)
    try:
        for number, settings in enumerate(workers):
            log = (logs / f"{slug}-{number}.log").open("wb")
            env = base_env | {"JETSPARK_REDIS_NAMESPACE": keys.namespace} | settings
            made.processes.append(
                subprocess.Popen(
                    [JETSPARK, "worker"],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        deadline = time.monotonic() + 240
        while not made.heartbeating():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name}: workers did not start within 240 s")
            time.sleep(0.5)  # cold Spark sessions starting in other processes
        # Warm-up: the first jobs compile Spark's code paths (a few per worker).
        for job_id in [made.submit(TINY) for _ in range(2 * len(made.processes))]:
            made.completed(job_id)
        yield made
    finally:
        for process in made.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in made.processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


def words_per_s(made: Deployment, path: Path, words: int, jobs: int) -> float:
    began = time.monotonic()
    ids = [made.submit(word_count(path)) for _ in range(jobs)]
    for job_id in ids:
        made.completed(job_id)
    return words * jobs / (time.monotonic() - began)


def tiny_latency_ms(made: Deployment, count: int) -> float:
    seconds = []
    for _ in range(count):
        job_id = made.submit(TINY)
        made.completed(job_id)
        queued = transition_at(made.sessions, job_id, "QUEUED")
        done = transition_at(made.sessions, job_id, "COMPLETED")
        assert queued is not None and done is not None
        seconds.append(done - queued)
    return statistics.median(seconds) * 1000


def events_per_s(made: Deployment, seconds: float) -> float:
    ids = [made.submit(stream_job()) for _ in range(2)]
    warm = [made.wait(i, lambda j: j.status == "RUNNING" and j.items_in > 0, 300) for i in ids]
    began, start = time.monotonic(), sum(j.items_in for j in warm)
    time.sleep(seconds)  # the streams run in the worker processes meanwhile
    now = sum(made.job(i).items_in for i in ids)
    elapsed = time.monotonic() - began
    for job_id in ids:
        made.cancel(job_id)
    for job_id in ids:
        made.wait(job_id, lambda j: j.status in ENDED, 120)
    return (now - start) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--words", type=int, default=2_000_000)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--tiny", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    exit_on_sigterm()  # SIGTERM stops the workers, the cluster and the servers too
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="jetspark-scale-") as home, ExitStack() as stack:
        root = Path(home)
        database, redis_url = stack.enter_context(services(root))
        database_url = fresh_database(database)
        engine = make_engine(database_url, pool_size=4)
        stack.callback(engine.dispose)
        sessions = sessionmaker(engine, expire_on_commit=False)
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        path = text_file(root, args.words)
        os.environ["JETSPARK_DATA_ROOTS"] = str(root)  # submissions are validated here too
        logs = Path(tempfile.gettempdir()) / "jetspark-scale-logs"  # kept for a look afterwards
        logs.mkdir(exist_ok=True)
        base_env = {
            **os.environ,
            "JETSPARK_DATABASE_URL": database_url,
            "JETSPARK_REDIS_URL": redis_url,
            "JETSPARK_DATA_ROOTS": str(root),
            "JETSPARK_WORKER_MAX_CONCURRENT_JOBS": "2",
            "JETSPARK_STREAM_EPOCH_INTERVAL_MS": "100",
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1",
        }
        cluster = stack.enter_context(standalone_cluster(root / "spark", workers=2, cores=1))
        cluster_conf = json.dumps(
            {
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.executor.cores": 1,
                "spark.executor.memory": "512m",
                "spark.cores.max": 2,
                "spark.scheduler.minRegisteredResourcesRatio": 1.0,
            }
        )
        layouts: list[tuple[str, list[dict[str, str]]]] = [
            ("local[2]", [{"JETSPARK_SPARK_MASTER": "local[2]"}]),
            ("standalone", [{"JETSPARK_SPARK_MASTER": cluster.master_url,
                             "JETSPARK_SPARK_CONF": cluster_conf}]),
            ("2 workers", [{"JETSPARK_SPARK_MASTER": "local[1]"}] * 2),
        ]  # fmt: skip
        for name, workers in layouts:
            with deployment(name, base_env, workers, sessions, client, logs) as made:
                figures[name] = {
                    "words/s": words_per_s(made, path, args.words, args.jobs),
                    "tiny ms": tiny_latency_ms(made, args.tiny),
                    "events/s": events_per_s(made, args.seconds),
                }
                print(f"{name}: {figures[name]}", flush=True)
    report(figures, args)


def report(figures: dict[str, dict[str, float]], args: argparse.Namespace) -> None:
    base = figures["local[2]"]
    print(
        f"\n{args.jobs} word counts of {args.words:,} words at once; tiny job submit -> "
        f"COMPLETED (median of {args.tiny}); 2 exactly-once streams for {args.seconds:.0f} s"
    )
    print(f"{'deployment':<12} {'words/s':>11} {'ratio':>6} {'tiny ms':>9} {'+ms':>7} "
          f"{'events/s':>10} {'ratio':>6}")  # fmt: skip
    for name, got in figures.items():
        print(
            f"{name:<12} {got['words/s']:>11,.0f} {got['words/s'] / base['words/s']:>6.2f} "
            f"{got['tiny ms']:>9.0f} {got['tiny ms'] - base['tiny ms']:>+7.0f} "
            f"{got['events/s']:>10,.0f} {got['events/s'] / base['events/s']:>6.2f}"
        )


if __name__ == "__main__":
    main()
