"""Chaos: a streaming job whose worker is SIGKILLed 20 times; lost and duplicated records.

Run: ``make bench-chaos`` (``.venv/bin/python -m bench.chaos [--kills N]``).
Two ``jetspark worker`` processes (each its own Spark, ``local[1]``) share real PostgreSQL
and Redis (``JETSPARK_DATABASE_URL`` / ``JETSPARK_REDIS_URL``, else the embedded servers).
An exactly-once job ``sequence -> insert_watermarks -> window (tumbling, keyed) -> sinks``
runs; each round waits until the job's current attempt has committed a snapshot of its own,
then SIGKILLs the worker holding it (with its JVM) and starts a replacement. Once the job
completes, ``sink.results``, ``sink.redis_map`` and ``sink.files`` are compared with the
windows computed in Python from the same events: every window must be there exactly once.
Also reported: per kill, the time from the kill to the next committed snapshot.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import redis
from sqlalchemy import select
from sqlalchemy.orm import sessionmaker

from bench.submit_latency import fresh_database, services
from jetspark.dag.model import JobSpec
from jetspark.db.engine import make_engine
from jetspark.db.tables import Job, JobResult
from jetspark.jobs import service
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from jetspark.settings import DagLimits

JETSPARK = str(Path(sys.executable).with_name("jetspark"))
SIZE_MS, KEYS = 1000, 7


def body(count: int, map_name: str, out_dir: Path) -> dict[str, Any]:
    window = {
        "timestamp": "ts",
        "type": "tumbling",
        "size_ms": SIZE_MS,
        "key": "k",
        "aggregations": {"n": "count(*)", "total": "sum(seq)"},
    }
    return {
        "name": "chaos",
        "dag": {
            "vertices": [
                {
                    "name": "numbers",
                    "processor": "source.sequence",
                    "params": {"count": count, "rate_per_s": 10_000_000},
                },
                {
                    "name": "events",
                    "processor": "map",
                    "params": {"select": {"seq": "seq", "ts": "seq * 3", "k": f"seq % {KEYS}"}},
                },
                {
                    "name": "stamped",
                    "processor": "insert_watermarks",
                    "params": {"timestamp": "ts", "allowed_lag_ms": 0},
                },
                {"name": "windows", "processor": "window", "params": window},
                {
                    "name": "keyed",
                    "processor": "map",
                    "params": {
                        "select": {
                            "id": "concat(window_start, '/', key)",
                            "window_start": "window_start",
                            "key": "key",
                            "n": "n",
                            "total": "total",
                        }
                    },
                },
                {"name": "results", "processor": "sink.results"},
                {
                    "name": "map",
                    "processor": "sink.redis_map",
                    "params": {"map": map_name, "key": "id"},
                },
                {
                    "name": "files",
                    "processor": "sink.files",
                    "params": {"path": str(out_dir), "format": "json"},
                },
            ],
            "edges": [
                {"from": "numbers", "to": "events"},
                {"from": "events", "to": "stamped"},
                {
                    "from": "stamped",
                    "to": "windows",
                    "routing": "partitioned",
                    "key": "k",
                    "distributed": True,
                },
                {"from": "windows", "to": "keyed"},
                {"from": "keyed", "to": "results", "from_ordinal": 0},
                {"from": "keyed", "to": "map", "from_ordinal": 1},
                {"from": "keyed", "to": "files", "from_ordinal": 2},
            ],
        },
        "config": {
            "members": 1,
            "local_parallelism": 1,
            "processing_guarantee": "exactly_once",
            "snapshot_interval_ms": 200,
            "epoch_interval_ms": 200,
        },
    }


def expected_windows(count: int) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for seq in range(count):
        window = f"{seq * 3 // SIZE_MS * SIZE_MS}/{seq % KEYS}"
        n, total = out.get(window, (0, 0))
        out[window] = (n + 1, total + seq)
    return out


Found = list[tuple[Any, tuple[Any, Any]]]


def compare(name: str, found: Found, expected: dict[str, Any]) -> int:
    seen = Counter(window for window, _ in found)
    duplicated = sum(n - 1 for n in seen.values() if n > 1)
    lost = sum(1 for window in expected if window not in seen)
    wrong = sum(1 for window, value in found if expected.get(window) != value)
    print(
        f"  {name:<13} windows {len(seen):5}  lost {lost}  duplicated {duplicated}  wrong {wrong}"
    )
    return lost + duplicated + wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--count", type=int, default=12_000)
    parser.add_argument("--per-epoch", type=int, default=150)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="jetspark-chaos-") as home_dir,
        services(Path(home_dir)) as (database, redis_url),
    ):
        home = Path(home_dir)
        url = fresh_database(database)
        engine = make_engine(url, pool_size=2)
        sessions = sessionmaker(engine, expire_on_commit=False)
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        keys = Keys(f"chaos-{uuid.uuid4().hex[:6]}")
        env = os.environ | {
            "JETSPARK_DATABASE_URL": url,
            "JETSPARK_REDIS_URL": redis_url,
            "JETSPARK_REDIS_NAMESPACE": keys.namespace,
            "JETSPARK_WORKER_LEASE_S": "3",
            "JETSPARK_WORKER_HEARTBEAT_S": "0.5",
            "JETSPARK_WORKER_MAX_CONCURRENT_JOBS": "1",
            "JETSPARK_SPARK_MASTER": "local[1]",
            "JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH": str(args.per_epoch),
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1",
        }
        workers: list[subprocess.Popen[bytes]] = []

        started = iter(range(10_000))

        def start() -> None:
            log = (home / f"worker-{next(started)}.log").open("wb")
            workers.append(
                subprocess.Popen(
                    [JETSPARK, "worker"],
                    env=env,
                    cwd=home,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )

        def job() -> Job:
            with sessions() as session:
                found = session.get(Job, job_id)
                assert found is not None
                return found

        def snapshot_of(j: Job) -> int:
            return int(j.last_snapshot["snapshot_id"]) if j.last_snapshot else 0

        def wait(ready: Any, deadline_s: float = 600) -> Job:
            deadline = time.monotonic() + deadline_s
            while time.monotonic() < deadline:
                j = job()
                if ready(j) or j.status in {"FAILED", "CANCELLED"}:
                    return j
                time.sleep(0.1)  # polling other processes' database writes
            raise TimeoutError("the job did not get there in time")

        start()
        start()
        map_name, out_dir = f"chaos-{uuid.uuid4().hex[:6]}", home / "out"
        with sessions() as session:
            spec = JobSpec.model_validate(body(args.count, map_name, out_dir))
            job_id = service.submit_job(session, spec=spec, limits=DagLimits()).job.id
        stream.ensure_group(client, keys)
        stream.announce(client, keys, job_id)
        recoveries: list[float] = []
        seen, killed_at = 0, None
        try:
            for kill in range(args.kills):
                current = wait(lambda j, s=seen: j.status == "RUNNING" and snapshot_of(j) > s)
                if current.status != "RUNNING":
                    break
                if killed_at is not None:
                    recoveries.append(time.monotonic() - killed_at)
                seen = snapshot_of(current)
                pid = int(str(current.worker).split(":")[1])
                holder = next(w for w in workers if w.pid == pid)
                os.killpg(holder.pid, signal.SIGKILL)
                holder.wait()
                killed_at = time.monotonic()
                workers.remove(holder)
                start()
                print(f"kill {kill + 1:2}: worker {pid} at snapshot {seen}", flush=True)
            done = wait(lambda j: j.status in {"COMPLETED", "FAILED"}, deadline_s=1800)
        finally:
            for worker in workers:
                os.killpg(worker.pid, signal.SIGKILL)
        print(f"job {done.status} after {done.attempt - 1} kills ({done.error_message or 'ok'})")
        if recoveries:
            print(
                f"kill -> next snapshot: median {statistics.median(recoveries):.1f} s, "
                f"max {max(recoveries):.1f} s (lease 3 s)"
            )
        expected = expected_windows(args.count)
        with sessions() as session:
            items = session.execute(select(JobResult.item).where(JobResult.job_id == job_id))
            results: Found = [(i["id"], (i["n"], i["total"])) for i in items.scalars()]
        stored = client.hgetall(keys.redis_map("legacy", map_name))
        in_map = [
            (k, (v["n"], v["total"])) for k, v in ((k, json.loads(v)) for k, v in stored.items())
        ]
        rows = [
            json.loads(line)
            for part in out_dir.glob("epoch=*/part-*")
            for line in part.read_text().splitlines()
            if line
        ]
        in_files: Found = [(r["id"], (r["n"], r["total"])) for r in rows]
        sinks: list[tuple[str, Found]] = [
            ("sink.results", results),
            ("sink.redis_map", in_map),
            ("sink.files", in_files),
        ]
        bad = sum(compare(name, found, expected) for name, found in sinks)
        engine.dispose()
        return 1 if bad or done.status != "COMPLETED" else 0


if __name__ == "__main__":
    sys.exit(main())
