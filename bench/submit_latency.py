"""Submit -> RUNNING latency with a warm worker, against a cold process per job.

Run: ``make bench-engine`` (``.venv/bin/python -m bench.submit_latency [--jobs N]``).
Warm: one worker (``worker.loop.Worker``) with its SparkSession built once, on real PostgreSQL
and Redis (``JETSPARK_DATABASE_URL`` / ``JETSPARK_REDIS_URL``, else the embedded servers).
Each job (the example word count) is submitted as ``POST /v1/jobs`` does it (validate, plan,
insert QUEUED, XADD); latency is the time between its QUEUED and RUNNING transitions, both
stamped by PostgreSQL. Jobs are submitted one after another, each once the last completed.
Cold: ``python -c`` that builds a SparkSession and runs the same job, as a spark-submit per
job would; its "RUNNING" is the moment the session is up, and its total is to the result.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import redis
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from bench.processes import exit_on_sigterm
from jetspark.dag.model import JobSpec
from jetspark.db.engine import make_engine, normalize_url
from jetspark.db.migrate import upgrade
from jetspark.db.tables import Job, JobTransition
from jetspark.jobs import service
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from jetspark.settings import DagLimits, DatabaseSettings, RedisSettings
from jetspark.spark_session import build_spark_session
from worker.engine import run_job
from worker.loop import Worker

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "word-count.json"
COLD = """
import json, threading, time, uuid, sys
started = float(sys.argv[1])
from jetspark.spark_session import build_spark_session
from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from worker.engine import JobControl, run_job
spark = build_spark_session(master="local[2]")
running = time.time() - started
spec = JobSpec.model_validate(json.loads(open(sys.argv[2]).read()))
plan = build_plan(validate_job(spec))
run_job(spark, plan, JobControl(job_group="cold", cancelled=threading.Event()))
print(json.dumps({"running_s": running, "total_s": time.time() - started}))
spark.stop()
"""


@contextmanager
def services(home: Path) -> Iterator[tuple[str, str]]:
    """The configured PostgreSQL and Redis, else embedded ones under ``home``, stopped when
    the block ends (an embedded server outliving its bench held its port and files), their
    data removed; with ``bench.processes.exit_on_sigterm`` also when the bench is told to
    stop."""
    database, redis_url = DatabaseSettings().url, RedisSettings().url
    with ExitStack() as started:
        if not database:
            from jetspark.embedded.postgres import EmbeddedPostgres, remove_data

            # As root the data may live outside ``home``, behind a link: removed last.
            started.callback(remove_data, home / "pg")
            postgres = EmbeddedPostgres(home / "pg")
            started.callback(postgres.stop)
            database = postgres.start()
        if not redis_url:
            from jetspark.embedded.redis import EmbeddedRedis

            server = EmbeddedRedis(home / "redis")
            started.callback(server.stop)
            redis_url = server.start()
        yield database, redis_url


def fresh_database(server_url: str) -> str:
    name = f"jetspark_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(normalize_url(server_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    url = make_url(normalize_url(server_url)).set(database=name)
    rendered = url.render_as_string(hide_password=False)
    upgrade(rendered)
    return rendered


def transition_at(sessions: sessionmaker[Session], job_id: uuid.UUID, status: str) -> float | None:
    with sessions() as session:
        at = session.execute(
            select(JobTransition.at).where(
                JobTransition.job_id == job_id, JobTransition.to_status == status
            )
        ).scalar_one_or_none()
        return at.timestamp() if at is not None else None


def wait_terminal(sessions: sessionmaker[Session], job_id: uuid.UUID, deadline_s: float) -> str:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        with sessions() as session:
            job = session.get(Job, job_id)
            if job is not None and job.status in {"COMPLETED", "FAILED", "CANCELLED"}:
                return job.status
        time.sleep(0.01)  # polling another thread's database writes
    raise TimeoutError(f"job {job_id} not finished within {deadline_s} s")


def warm_latencies(jobs: int) -> list[float]:
    with (
        tempfile.TemporaryDirectory(prefix="jetspark-bench-") as home,
        services(Path(home)) as (database, redis_url),
    ):
        engine = make_engine(fresh_database(database), pool_size=4)
        sessions = sessionmaker(engine, expire_on_commit=False)
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        keys = Keys(f"bench-{uuid.uuid4().hex[:6]}")
        spark = build_spark_session(master="local[2]", app_name="jetspark-bench")
        spark.sparkContext.setLogLevel("ERROR")
        worker = Worker(
            spark=spark, sessions=sessions, client=client, keys=keys, engine_run=run_job
        )
        loop = threading.Thread(target=worker.run, daemon=True)
        loop.start()
        body = json.loads(EXAMPLE.read_text())
        latencies = []
        try:
            for i in range(jobs + 1):
                with sessions() as session:
                    body["name"] = f"latency-{i}"
                    spec = JobSpec.model_validate(body)
                    job = service.submit_job(session, spec=spec, limits=DagLimits()).job
                    stream.announce(client, keys, job.id)
                status = wait_terminal(sessions, job.id, 120)
                assert status == "COMPLETED", status
                queued = transition_at(sessions, job.id, "QUEUED")
                running = transition_at(sessions, job.id, "RUNNING")
                assert queued is not None and running is not None
                if i > 0:  # the first job warms the JVM's code paths
                    latencies.append(running - queued)
        finally:
            worker.stop()
            loop.join(timeout=30)
            spark.stop()
            engine.dispose()
    return latencies


def cold_run() -> dict[str, float]:
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", COLD, str(started), str(EXAMPLE)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--cold-runs", type=int, default=2)
    args = parser.parse_args()
    exit_on_sigterm()
    warm = warm_latencies(args.jobs)
    print(f"warm worker, {len(warm)} jobs: submit -> RUNNING")
    p50, p99 = percentile(warm, 0.5) * 1000, percentile(warm, 0.99) * 1000
    print(f"  p50 {p50:7.1f} ms   p99 {p99:7.1f} ms   mean {statistics.mean(warm) * 1000:7.1f} ms")
    colds = [cold_run() for _ in range(args.cold_runs)]
    for cold in colds:
        print(f"cold python -c: session up (RUNNING) {cold['running_s']:5.1f} s, "
              f"result {cold['total_s']:5.1f} s")  # fmt: skip


if __name__ == "__main__":
    main()
