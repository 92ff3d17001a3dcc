"""Faults: Redis restarts, PostgreSQL restarts, API restarts and worker SIGKILLs, in random
order, under steady submissions with an exactly-once stream running.

Run: ``make bench-faults`` (``.venv/bin/python -m bench.faults [--cycles N]``).
Starts its own embedded PostgreSQL and Valkey (it restarts them; never the machine's), a
``jetspark api`` and two ``jetspark worker`` processes (each ``local[1]``). A submitter thread
posts a word count every ``--submit-every`` seconds through the API; an unbounded windowed
stream (``exactly_once``) runs throughout. Each cycle is the four faults in a random order,
each followed by a pause of ``--pause`` seconds. At the end the stream is cancelled and the
batch jobs are given time to finish. Reported: jobs accepted, completed, lost (accepted but
never completed: must be 0), duplicated results (0), wrong windows (0), 5xx answers other
than 503, and per fault the time from its end to the stream's next committed snapshot; for a
worker SIGKILL (of the stream's holder, with the default lease) from the kill, split into its
phases as the resumed attempt's timings tell them (``worker/timings.py``: detect, claim,
start, plan, setup, restore, first_snapshot).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from bench.chaos import PHASES, phases_of
from bench.submit_latency import fresh_database
from jetspark.db.engine import make_engine
from jetspark.db.tables import Job, JobResult
from jetspark.embedded.postgres import EmbeddedPostgres
from jetspark.embedded.process import free_port
from jetspark.embedded.redis import EmbeddedRedis
from jetspark.jobs import orchestration
from jetspark.queue.keys import Keys

JETSPARK = str(Path(sys.executable).with_name("jetspark"))
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "word-count.json"
TOKEN = "bench-faults"
SIZE_MS, KEYS = 1000, 5


def stream_body() -> dict[str, Any]:
    return {
        "name": "faults-stream",
        "dag": {
            "vertices": [
                {
                    "name": "numbers",
                    "processor": "source.sequence",
                    "params": {"count": None, "rate_per_s": 10_000_000},
                },
                {
                    "name": "events",
                    "processor": "map",
                    "params": {"select": {"seq": "seq", "ts": "seq * 7", "k": f"seq % {KEYS}"}},
                },
                {
                    "name": "stamped",
                    "processor": "insert_watermarks",
                    "params": {"timestamp": "ts", "allowed_lag_ms": 0},
                },
                {
                    "name": "windows",
                    "processor": "window",
                    "params": {
                        "timestamp": "ts",
                        "type": "tumbling",
                        "size_ms": SIZE_MS,
                        "key": "k",
                        "aggregations": {"n": "count(*)", "total": "sum(seq)"},
                    },
                },
                {"name": "results", "processor": "sink.results", "local_parallelism": 1},
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
                {"from": "windows", "to": "results"},
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


def window_of(seq: int) -> tuple[int, int]:
    return (seq * 7 // SIZE_MS * SIZE_MS, seq % KEYS)


def expected_window(start: int, key: int) -> tuple[int, int]:
    """(count, sum of seq) of the window ``[start, start + SIZE_MS)`` of ``key``."""
    first = -(-start // 7)
    seqs = [s for s in range(first, -(-(start + SIZE_MS) // 7)) if s % KEYS == key]
    return len(seqs), sum(seqs)


@dataclass
class Submissions:
    accepted: list[str] = field(default_factory=list)
    answers: Counter[int] = field(default_factory=Counter)
    unreachable: int = 0
    other_5xx: list[str] = field(default_factory=list)


class Stack:
    """The servers and processes of one run, each restartable."""

    def __init__(self, home: Path, workers: int) -> None:
        self.home = home
        self.pg = EmbeddedPostgres(home / "pg" / "data", port=free_port())
        self.redis_port = free_port()
        self.redis = EmbeddedRedis(home / "redis", port=self.redis_port)
        self.api_port = free_port()
        self.url = f"http://127.0.0.1:{self.api_port}"
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.worker_names = [f"worker-{n}" for n in range(1, workers + 1)]
        self.env: dict[str, str] = {}

    def start_servers(self) -> str:
        url = fresh_database(self.pg.start())
        redis_url = self.redis.start()
        self.env = dict(os.environ) | {
            "JETSPARK_DATABASE_URL": url,
            "JETSPARK_REDIS_URL": redis_url,
            "JETSPARK_API_TOKENS": TOKEN,
            # The workers' lease, heartbeat and reconciler are the defaults: a lost worker
            # is noticed by its liveness session, not by a lease tuned short.
            "JETSPARK_WORKER_MAX_CONCURRENT_JOBS": "2",
            "JETSPARK_SPARK_MASTER": "local[1]",
            "JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH": "200",
            "JETSPARK_SHUTDOWN_GRACE_S": "5",
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1",
        }
        return url

    def start(self, name: str) -> None:
        argv = (
            [JETSPARK, "api", "--port", str(self.api_port)]
            if name == "api"
            else [
                JETSPARK,
                "worker",
            ]
        )
        log = (self.home / f"{name}.log").open("ab")
        self.processes[name] = subprocess.Popen(
            argv, env=self.env, cwd=self.home, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def kill(self, name: str) -> None:
        process = self.processes[name]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def stop_all(self) -> None:
        for name in list(self.processes):
            self.kill(name)
        self.redis.stop()
        self.pg.stop()


def wait(probe: Callable[[], bool], deadline_s: float, what: str) -> None:
    deadline = time.monotonic() + deadline_s
    while not probe():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {deadline_s:.0f} s: {what}")
        time.sleep(0.2)  # polling other processes, bounded by the deadline


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cycles", type=int, default=10)
    parser.add_argument("--pause", type=float, default=8.0)
    parser.add_argument("--submit-every", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    # SIGTERM (timeout, Ctrl-C in a supervisor) ends the run through its finally blocks:
    # the workers and the servers it started are stopped.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    chance = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="jetspark-faults-") as home_dir:
        stack = Stack(Path(home_dir), workers=2)
        database = stack.start_servers()
        engine = make_engine(database, pool_size=2)
        sessions = sessionmaker(engine, expire_on_commit=False)
        try:
            return run(stack, sessions, args, chance)
        finally:
            stack.stop_all()
            engine.dispose()


def read(sessions: sessionmaker[Session], job_id: str) -> Job | None:
    try:
        with sessions() as session:
            return session.get(Job, uuid.UUID(job_id))
    except Exception:  # PostgreSQL restarting under the bench itself
        return None


def last_snapshot(sessions: sessionmaker[Session], job_id: str) -> int:
    job = read(sessions, job_id)
    return int((job.last_snapshot or {}).get("snapshot_id", 0)) if job else -1


def run(
    stack: Stack, sessions: sessionmaker[Session], args: argparse.Namespace, chance: random.Random
) -> int:
    stack.start("api")
    for name in stack.worker_names:
        stack.start(name)
    http = httpx.Client(base_url=stack.url, headers={"Authorization": f"Bearer {TOKEN}"})
    wait(lambda: _ready(http), 120, "the API ready")
    created = http.post("/v1/jobs", json=stream_body())
    created.raise_for_status()
    stream_id = created.json()["id"]
    wait(lambda: last_snapshot(sessions, stream_id) >= 2, 300, "the stream's first snapshots")
    submitted = Submissions()
    stop = threading.Event()
    thread = threading.Thread(
        target=submit_steadily, args=(stack.url, args.submit_every, submitted, stop), daemon=True
    )
    thread.start()
    recoveries: dict[str, list[float]] = {}
    phases: list[dict[str, float]] = []

    def redis_restart() -> None:
        stack.redis.stop()
        stack.redis.start()

    def postgres_restart() -> None:
        stack.pg.stop()
        stack.pg.start()

    def api_restart() -> None:
        stack.kill("api")
        stack.start("api")
        wait(lambda: _ready(http), 120, "the API back")

    def worker_kill() -> None:
        job = read(sessions, stream_id)
        holder = job.worker.split(":")[1] if job and job.worker else None
        victim = next(
            (n for n in stack.worker_names if str(stack.processes[n].pid) == holder),
            chance.choice(stack.worker_names),
        )
        stack.kill(victim)
        stack.start(victim)

    def workers_warm() -> bool:
        """Every worker's loop runs (it heartbeats): a kill has a warm worker to go to."""
        try:
            client = redis.Redis(port=stack.redis_port, decode_responses=True)
            beating = {k.split(":")[-2] for k in client.scan_iter(Keys().worker_heartbeat("*"))}
            client.close()
        except redis.RedisError:
            return False
        return all(str(stack.processes[n].pid) in beating for n in stack.worker_names)

    faults: dict[str, Callable[[], None]] = {
        "redis restart": redis_restart,
        "postgresql restart": postgres_restart,
        "api restart": api_restart,
        "worker SIGKILL": worker_kill,
    }
    try:
        for cycle in range(args.cycles):
            order = list(faults)
            chance.shuffle(order)
            for name in order:
                if name == "worker SIGKILL":
                    wait(workers_warm, 300, "every worker warm before the kill")
                before = last_snapshot(sessions, stream_id)
                killed = orchestration.now()
                faults[name]()
                recoveries.setdefault(name, []).append(
                    next_snapshot_after(sessions, stream_id, before)
                )
                job = read(sessions, stream_id)
                if name == "worker SIGKILL" and job is not None:
                    phases.append(phases_of(job.timings or {}, killed))
                print(
                    f"cycle {cycle + 1:2} {name:<19} next snapshot after "
                    f"{recoveries[name][-1]:6.1f} s (stream {job.status if job else '?'})",
                    flush=True,
                )
                stop.wait(args.pause)
    finally:
        stop.set()
        thread.join(timeout=30)
    return report(stack, sessions, http, stream_id, submitted, recoveries, phases)


def next_snapshot_after(sessions: sessionmaker[Session], stream_id: str, before: int) -> float:
    """Seconds until the stream commits a snapshot newer than ``before`` (inf: none in 300 s)."""
    ended = time.monotonic()
    try:
        wait(lambda: last_snapshot(sessions, stream_id) > before, 300, "the next snapshot")
    except TimeoutError:
        return float("inf")
    return time.monotonic() - ended


def submit_steadily(url: str, every_s: float, into: Submissions, stop: threading.Event) -> None:
    """Post a word count every ``every_s`` until ``stop``; count every kind of answer."""
    word_count = json.loads(EXAMPLE.read_text())
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=url, headers=headers, timeout=15) as client:
        while not stop.wait(every_s):
            try:
                response = client.post("/v1/jobs", json=word_count)
            except httpx.HTTPError:
                into.unreachable += 1  # the API process is restarting
                continue
            into.answers[response.status_code] += 1
            if response.status_code == 201:
                into.accepted.append(response.json()["id"])
            elif response.status_code >= 500 and response.status_code != 503:
                into.other_5xx.append(response.text[:200])


def _ready(http: httpx.Client) -> bool:
    try:
        return http.get("/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def report(
    stack: Stack,
    sessions: sessionmaker[Session],
    http: httpx.Client,
    stream_id: str,
    submitted: Submissions,
    recoveries: dict[str, list[float]],
    phases: list[dict[str, float]],
) -> int:
    http.post(f"/v1/jobs/{stream_id}/cancel").raise_for_status()

    def all_ended() -> bool:
        jobs = [read(sessions, j) for j in submitted.accepted]
        return all(j is not None and j.status in {"COMPLETED", "FAILED"} for j in jobs)

    try:
        wait(all_ended, 600, "every accepted job ended")
    except TimeoutError as error:
        print(error)
    expected = Counter(
        word
        for line in json.loads(EXAMPLE.read_text())["dag"]["vertices"][0]["params"]["items"]
        for word in line["line"].split()
    )
    completed = duplicated = failed = 0
    with sessions() as session:
        for job_id in submitted.accepted:
            job = session.get(Job, uuid.UUID(job_id))
            if job is None or job.status != "COMPLETED":
                failed += job is not None and job.status == "FAILED"
                continue
            completed += 1
            items = session.scalars(select(JobResult.item).where(JobResult.job_id == job.id))
            got: Counter[str] = Counter()
            for item in items:
                got[str(item["key"])] += int(item["count"])
            duplicated += got != expected  # a job whose results are not exactly the counts
        rows = session.scalars(
            select(JobResult.item).where(JobResult.job_id == uuid.UUID(stream_id))
        ).all()
    windows = Counter((int(i["window_start"]), int(i["key"])) for i in rows)
    dup_windows = sum(n - 1 for n in windows.values() if n > 1)
    wrong = sum(
        1
        for i in rows
        if (i["n"], i["total"]) != expected_window(int(i["window_start"]), int(i["key"]))
    )
    newest = max((start for start, _ in windows), default=-1)
    lost_windows = sum(
        1
        for start in range(0, newest, SIZE_MS)
        for key in range(KEYS)
        if (start, key) not in windows
    )
    lost = len(submitted.accepted) - completed - failed
    print(f"submissions: {dict(submitted.answers)}, API unreachable {submitted.unreachable}")
    print(
        f"jobs accepted {len(submitted.accepted)}, completed {completed}, failed {failed}, "
        f"lost {lost}, jobs with duplicated or wrong results {duplicated}"
    )
    print(
        f"stream windows {len(windows)}: duplicated {dup_windows}, wrong {wrong}, "
        f"missing {lost_windows}"
    )
    print(f"5xx other than 503: {len(submitted.other_5xx)} {submitted.other_5xx[:3]}")
    for name, times in recoveries.items():
        finite = [t for t in times if t != float("inf")]
        median = statistics.median(finite) if finite else float("nan")
        print(
            f"{name:<19} fault end -> next snapshot: median {median:.1f} s, "
            f"max {max(times):.1f} s ({len(times)} faults)"
        )
    for phase in PHASES:
        values = [p[phase] for p in phases if phase in p]
        if values:
            print(
                f"  worker SIGKILL {phase:<15} median {statistics.median(values):5.2f} s, "
                f"max {max(values):5.2f} s"
            )
    logs = sorted(stack.home.glob("*.log"))
    keep = Path("bench-faults-logs")
    shutil.rmtree(keep, ignore_errors=True)
    keep.mkdir()
    for log in logs:
        shutil.copy(log, keep / log.name)
    bad = lost + duplicated + dup_windows + wrong + lost_windows + len(submitted.other_5xx)
    return 1 if bad or failed else 0


if __name__ == "__main__":
    sys.exit(main())
