"""Chaos: the worker holding an exactly-once windowed stream is SIGKILLed, again and again.

Run: ``make bench-chaos`` (``.venv/bin/python -m bench.chaos [--kills 10] [--workers 2]``).
``--workers`` ``jetspark worker`` processes (each its own Spark, ``local[1]``) share real
PostgreSQL and Redis (``JETSPARK_DATABASE_URL`` / ``JETSPARK_REDIS_URL``, else embedded
servers), with the default lease (15 s): nothing is tuned. An exactly-once stream
``sequence -> insert_watermarks -> window (tumbling, keyed) -> sinks`` runs; each round waits
until every worker is warm and the stream's current attempt has committed a snapshot of its
own, then SIGKILLs the worker holding it (with its JVM) and, as ``jetspark up`` does, starts
a replacement ``--restart-after`` seconds later.

Reported per kill and as median and max: the time from the kill to the stream's next
committed snapshot, and where it went (``worker/timings.py``): ``detect`` (kill -> the
lost worker's jobs requeued), ``claim`` (-> claimed), ``start`` (-> RUNNING), ``plan``,
``setup`` (the stream's session and ops), ``restore`` (the snapshot read back) and
``first_snapshot`` (the replayed and first epochs, the snapshot written and committed).
With ``--workers 1`` the replacement is the only worker: the kill -> next snapshot time is
set against the worker's cold start (process start -> its loop running), measured in the
same run. At the end the stream is cancelled and ``sink.results``, ``sink.redis_map`` and
``sink.files`` are compared with the windows computed in Python from the same events: every
window up to the newest one committed must be there exactly once, with its exact values.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import redis
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from bench.submit_latency import fresh_database, services
from jetspark.dag.model import JobSpec
from jetspark.db.engine import make_engine
from jetspark.db.tables import Job, JobResult
from jetspark.jobs import orchestration, service
from jetspark.jobs.status import JobStatus
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from jetspark.settings import DagLimits, WorkerSettings
from worker.timings import recovery_phases

JETSPARK = str(Path(sys.executable).with_name("jetspark"))
SIZE_MS, KEYS, TS_STEP = 1000, 7, 3
FIRST_EPOCHS = 3
PHASES = ("detect", "claim", "start", "plan", "setup", "restore", "first_snapshot")


def body(map_name: str, out_dir: Path) -> dict[str, Any]:
    window = {
        "timestamp": "ts",
        "type": "tumbling",
        "size_ms": SIZE_MS,
        "key": "k",
        "aggregations": {"n": "count(*)", "total": "sum(seq)"},
    }
    events = {"seq": "seq", "ts": f"seq * {TS_STEP}", "k": f"seq % {KEYS}"}
    return {
        "name": "chaos",
        "dag": {
            "vertices": [
                {
                    "name": "numbers",
                    "processor": "source.sequence",
                    "params": {"count": None, "rate_per_s": 10_000_000},
                },
                {"name": "events", "processor": "map", "params": {"select": events}},
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


def expected_window(start: int, key: int) -> tuple[int, int]:
    """(count, sum of seq) of the window ``[start, start + SIZE_MS)`` of ``key``."""
    first, end = -(-start // TS_STEP), -(-(start + SIZE_MS) // TS_STEP)
    seqs = [s for s in range(first, end) if s % KEYS == key]
    return len(seqs), sum(seqs)


Found = list[tuple[tuple[int, int], tuple[int, int]]]


def compare(name: str, found: Found, newest: int) -> int:
    """Windows up to ``newest`` (a start) each once with exact values; later ones exact."""
    seen = Counter(window for window, _ in found)
    duplicated = sum(n - 1 for n in seen.values() if n > 1)
    wrong = sum(1 for window, value in found if expected_window(*window) != value)
    lost = sum(
        1
        for start in range(0, newest + 1, SIZE_MS)
        for key in range(KEYS)
        if (start, key) not in seen
    )
    print(
        f"  {name:<15} windows {len(seen):6}  lost {lost}  duplicated {duplicated}  wrong {wrong}"
    )
    return lost + duplicated + wrong


@dataclass
class Kill:
    recovery_s: float
    phases: dict[str, float] = field(default_factory=dict)


@dataclass
class Workers:
    """The ``jetspark worker`` processes of the run, with when each was started."""

    home: Path
    env: dict[str, str]
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    started_at: dict[int, float] = field(default_factory=dict)
    cold_starts: list[float] = field(default_factory=list)
    counter: int = 0
    pending: threading.Timer | None = None

    def start(self) -> None:
        self.counter += 1
        log = (self.home / f"worker-{self.counter}.log").open("wb")
        process = subprocess.Popen(
            [JETSPARK, "worker"],
            env=self.env,
            cwd=self.home,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes.append(process)
        self.started_at[process.pid] = time.monotonic()

    def start_later(self, delay_s: float) -> None:
        """Start a worker in ``delay_s`` (as ``jetspark up`` restarts one), unless stopped."""
        self.pending = threading.Timer(delay_s, self.start)
        self.pending.start()

    def kill(self, pid: int) -> None:
        process = next(p for p in self.processes if p.pid == pid)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        self.processes.remove(process)

    def warm(self, client: redis.Redis, keys: Keys, count: int) -> bool:
        """``count`` workers started (a replacement not yet started is not warm) and every
        worker's loop running (it heartbeats in Redis); records cold starts."""
        if len(self.processes) < count:
            return False
        beating = {key.split(":")[-2] for key in client.scan_iter(keys.worker_heartbeat("*"))}
        for process in self.processes:
            assert process.poll() is None, f"worker {process.pid} exited"
            if str(process.pid) not in beating:
                return False
            if process.pid in self.started_at:
                self.cold_starts.append(time.monotonic() - self.started_at.pop(process.pid))
        return True

    def stop(self) -> None:
        if self.pending is not None:
            self.pending.cancel()
            self.pending.join()
        for process in self.processes:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def wait(probe: Any, what: str, deadline_s: float = 600, every_s: float = 0.05) -> Any:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(every_s)  # polling other processes' writes, bounded by the deadline
    raise TimeoutError(f"not within {deadline_s:.0f} s: {what}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2, choices=(1, 2))
    parser.add_argument("--per-epoch", type=int, default=300)
    parser.add_argument(
        "--restart-after",
        type=float,
        default=0.5,
        help="seconds from a kill to its replacement's start (jetspark up's backoff: 0.5)",
    )
    args = parser.parse_args()
    # SIGTERM (timeout, Ctrl-C in a supervisor) ends the run through its finally blocks:
    # the workers and the servers it started are stopped.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    with (
        tempfile.TemporaryDirectory(prefix="jetspark-chaos-") as home_dir,
        services(Path(home_dir)) as (database, redis_url),
    ):
        home = Path(home_dir)
        os.environ["JETSPARK_DATA_ROOTS"] = str(home)  # sink.files writes under it
        url = fresh_database(database)
        engine = make_engine(url, pool_size=2)
        sessions = sessionmaker(engine, expire_on_commit=False)
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        keys = Keys(f"chaos-{uuid.uuid4().hex[:6]}")
        env = {
            key: value for key, value in os.environ.items() if not key.startswith("JETSPARK_")
        } | {
            "JETSPARK_DATABASE_URL": url,
            "JETSPARK_REDIS_URL": redis_url,
            "JETSPARK_REDIS_NAMESPACE": keys.namespace,
            "JETSPARK_DATA_ROOTS": str(home),
            "JETSPARK_WORKER_MAX_CONCURRENT_JOBS": "1",
            "JETSPARK_SPARK_MASTER": "local[1]",
            "JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH": str(args.per_epoch),
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1",
        }
        workers = Workers(home, env)
        try:
            return run(args, workers, sessions, client, keys, home)
        finally:
            workers.stop()
            engine.dispose()
            keep = Path("bench-chaos-logs")  # the workers' logs, to see where time went
            shutil.rmtree(keep, ignore_errors=True)
            keep.mkdir()
            for log in home.glob("worker-*.log"):
                shutil.copy(log, keep / log.name)


def run(
    args: argparse.Namespace,
    workers: Workers,
    sessions: sessionmaker[Session],
    client: redis.Redis,
    keys: Keys,
    home: Path,
) -> int:
    for _ in range(args.workers):
        workers.start()
    wait(lambda: workers.warm(client, keys, args.workers), "the workers warm")
    map_name, out_dir = f"chaos-{uuid.uuid4().hex[:6]}", home / "out"
    with sessions() as session:
        spec = JobSpec.model_validate(body(map_name, out_dir))
        job_id = service.submit_job(session, spec=spec, limits=DagLimits()).job.id
    stream.ensure_group(client, keys)
    stream.announce(client, keys, job_id)

    def job() -> Job:
        with sessions() as session:
            found = session.get(Job, job_id)
            assert found is not None
            return found

    def snapshot_of(j: Job) -> int:
        return int(j.last_snapshot["snapshot_id"]) if j.last_snapshot else 0

    def past(j: Job, snapshot: int) -> Job | None:
        """The job once it committed a snapshot after ``snapshot`` (or failed)."""
        return j if j.status == "FAILED" or snapshot_of(j) > snapshot else None

    kills: list[Kill] = []
    seen = 0
    for number in range(1, args.kills + 1):
        current = wait(lambda s=seen: past(job(), s), "a snapshot of the current attempt")
        if current.status == "FAILED":
            print(f"the stream FAILED: {current.error_type}: {current.error_message}")
            return 1
        wait(lambda: workers.warm(client, keys, args.workers), "every worker warm")
        current = job()
        if number > 1:  # the last takeover's first epochs, recorded by now
            print_epochs((current.timings or {}).get("epochs", []))
        seen = snapshot_of(current)
        holder = int(str(current.worker).split(":")[1])
        workers.kill(holder)
        killed_at, killed_wall = time.monotonic(), orchestration.now()
        workers.start_later(args.restart_after)
        after = wait(lambda s=seen: past(job(), s), "the next snapshot", every_s=0.02)
        if after.status == "FAILED":
            print(f"the stream FAILED: {after.error_type}: {after.error_message}")
            return 1
        kill = Kill(time.monotonic() - killed_at, phases_of(after.timings or {}, killed_wall))
        kills.append(kill)
        seen = snapshot_of(after)
        split = "  ".join(f"{p} {kill.phases[p]:.2f}" for p in PHASES if p in kill.phases)
        print(
            f"kill {number:2}: worker {holder} -> snapshot {seen} after {kill.recovery_s:5.2f} s"
            f" ({split})",
            flush=True,
        )
    return report(args, workers, kills, sessions, client, keys, job_id, map_name, out_dir)


def print_epochs(epochs: list[dict[str, Any]]) -> None:
    """The attempt's first epochs: where the first snapshot's seconds went."""
    for e in epochs[:FIRST_EPOCHS]:
        spark = (
            f" (spark {e['spark_s']:.2f}, driver {e['driver_s']:.2f})"
            if e.get("spark_s") is not None
            else ""
        )
        print(
            f"    epoch {e['epoch']}: {e['items']} items  plan {e['plan_s']:.2f}"
            f"  run {e['run_s']:.2f}{spark}  checkpoint {e['checkpoint_s']:.2f}"
            f"  await {e['await_commit_s']:.2f}"
            f"  snapshot {e.get('snapshot_s') or 0:.2f}  commit {e['commit_s']:.2f}"
        )


def phases_of(timings: dict[str, Any], killed: datetime) -> dict[str, float]:
    """The recovery's phases from the attempt's timings; ``detect`` from the kill itself."""
    phases = dict(recovery_phases(timings))
    noticed = (timings.get("holder_lost") or {}).get("noticed") or timings.get("queued")
    if noticed:
        phases["detect"] = (datetime.fromisoformat(noticed) - killed).total_seconds()
    return phases


def report(
    args: argparse.Namespace,
    workers: Workers,
    kills: list[Kill],
    sessions: sessionmaker[Session],
    client: redis.Redis,
    keys: Keys,
    job_id: uuid.UUID,
    map_name: str,
    out_dir: Path,
) -> int:
    with sessions() as session:
        orchestration.transition(session, job_id, JobStatus.CANCELLED, cause="bench ended")
        session.commit()
    lease = WorkerSettings().lease_s
    times = [k.recovery_s for k in kills]
    print(
        f"\n{args.workers} worker(s), lease {lease:g} s (default), {len(kills)} kills: "
        f"kill -> next snapshot median {statistics.median(times):.2f} s, max {max(times):.2f} s"
    )
    for phase in PHASES:
        values = [k.phases[phase] for k in kills if phase in k.phases]
        if values:
            print(
                f"  {phase:<15} median {statistics.median(values):5.2f} s  max {max(values):5.2f} s"
            )
    if workers.cold_starts:
        cold = statistics.median(workers.cold_starts)
        print(
            f"worker cold start (process start -> loop running): median {cold:.2f} s "
            f"({len(workers.cold_starts)} starts); kill -> next snapshot / cold start: "
            f"{statistics.median(times) / cold:.2f}x"
        )
    with sessions() as session:
        items = session.execute(select(JobResult.item).where(JobResult.job_id == job_id))
        results: Found = [
            ((int(i["window_start"]), int(i["key"])), (int(i["n"]), int(i["total"])))
            for i in items.scalars()
        ]
    newest = max((start for (start, _), _ in results), default=-SIZE_MS) - SIZE_MS
    stored = client.hgetall(keys.redis_map("legacy", map_name))
    in_map: Found = [
        ((int(v["window_start"]), int(v["key"])), (int(v["n"]), int(v["total"])))
        for v in (json.loads(value) for value in stored.values())
    ]
    rows = [
        json.loads(line)
        for part in out_dir.glob("epoch=*/part-*")
        for line in part.read_text().splitlines()
        if line
    ]
    in_files: Found = [
        ((int(r["window_start"]), int(r["key"])), (int(r["n"]), int(r["total"]))) for r in rows
    ]
    print(f"windows up to {newest} ms checked:")
    bad = sum(
        compare(name, found, newest)
        for name, found in (
            ("sink.results", results),
            ("sink.redis_map", in_map),
            ("sink.files", in_files),
        )
    )
    client.delete(keys.redis_map("legacy", map_name))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
