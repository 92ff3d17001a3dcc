"""Streaming: sustained events/s with exactly-once snapshots vs none, watermark lag, recovery.

Run: ``make bench-streaming`` (``.venv/bin/python -m bench.streaming [--seconds S]``).
One in-process worker (warm SparkSession, ``local[2]``) on real PostgreSQL and Redis
(``JETSPARK_DATABASE_URL`` / ``JETSPARK_REDIS_URL``, else the embedded servers) runs:

1. throughput, the three guarantees and Structured Streaming side by side in the same run,
   after ``--warmup`` seconds of an untimed run: ``source.sequence`` (unbounded, as fast as
   it goes) -> ``insert_watermarks`` -> ``window`` (tumbling 1 s, 1,000 keys) ->
   ``sink.logger``; events/s = items the source emitted over the committed epochs, read from
   the job's committed progress. The ratio exactly_once / none is the snapshot overhead.
2. watermark lag: the same DAG fed at 100k events/s with 1 s epochs
   (``--lag-interval-ms``); after ``--lag-warmup`` seconds (the JVM compiles the epoch's
   code and drains the backlog of the first epochs), the lag of the window vertex's
   coalesced watermark behind the wall clock, from the metric documents published every
   0.5 s (p50, p99, max), against the epoch interval.
3. result latency: the same DAG fed at ``--latency-rate`` events/s (1,000, the rate of Spark's
   own real-time-mode benchmark) with ``--latency-interval-ms`` epochs (100) into a
   ``sink.redis_stream`` that a reader here follows (``XREAD``); per window result, the ms
   from the window closing (its end on the wall clock: the sequence stamps each item with the
   time it is due and the watermark has no lag, so the item that closes a window is due at
   its end) to the reader receiving it, after ``--lag-warmup`` seconds (p50, p99, max).
4. recovery: the worker holding an exactly-once job is lost (its job threads stop, its lease
   runs out); a second worker takes over. Reported: loss -> claimed by the other worker, and
   claimed -> its first committed snapshot (the restore and one epoch).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import redis
from sqlalchemy.orm import sessionmaker

from bench.submit_latency import fresh_database, percentile, services
from jetspark.dag.model import JobSpec
from jetspark.db.engine import make_engine
from jetspark.db.tables import Job
from jetspark.jobs import service
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from jetspark.settings import DagLimits, WorkerSettings
from jetspark.spark_session import build_spark_session
from worker.engine import run_job
from worker.engine.contract import RedisTarget
from worker.engine.streaming.profile import summary
from worker.loop import Worker
from worker.warm_up import warm_up

KEYS = 1000


LOGGER: dict[str, Any] = {"name": "sink", "processor": "sink.logger"}


def pipeline(
    guarantee: str, *, rate: int | None, interval_ms: int, sink: dict[str, Any] = LOGGER
) -> dict[str, Any]:
    return {
        "name": f"bench-{guarantee}",
        "dag": {
            "vertices": [
                {
                    "name": "events",
                    "processor": "source.sequence",
                    "params": {"count": None, "rate_per_s": rate},
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
                        "size_ms": 1000,
                        "key": f"seq % {KEYS}",
                        "aggregations": {"n": "count(*)"},
                    },
                },
                sink,
            ],
            "edges": [
                {"from": "events", "to": "stamped"},
                {
                    "from": "stamped",
                    "to": "windows",
                    "routing": "partitioned",
                    "key": f"seq % {KEYS}",
                },
                {"from": "windows", "to": "sink"},
            ],
        },
        "config": {
            "members": 1,
            "local_parallelism": 2,
            "processing_guarantee": guarantee,
            "snapshot_interval_ms": interval_ms,
            "epoch_interval_ms": interval_ms,
        },
    }


class Stack:
    """Services, a database of its own, a warm worker: what every measurement runs on."""

    def __init__(self, home: Path) -> None:
        self.exits = ExitStack()
        self.home = home
        database, redis_url = self.exits.enter_context(services(home))
        self.engine = make_engine(fresh_database(database), pool_size=6)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.client = redis.Redis.from_url(redis_url, decode_responses=True)
        self.keys = Keys(f"bench-{uuid.uuid4().hex[:6]}")
        self.spark = build_spark_session(master="local[2]", app_name="jetspark-bench")
        self.spark.sparkContext.setLogLevel("ERROR")
        # As a worker does at start (``worker.main``): else the first job measured pays the
        # JVM's warm-up, and ``none``, measured first, looked slower than ``exactly_once``.
        warm_up(self.spark, RedisTarget.of_client(self.client, self.keys.namespace))
        self.workers: list[tuple[Worker, threading.Thread]] = []

    def start_worker(self, lease_s: float = 15.0) -> Worker:
        settings = WorkerSettings(lease_s=lease_s, heartbeat_s=0.2, max_concurrent_jobs=2)
        worker = Worker(
            spark=self.spark,
            sessions=self.sessions,
            client=self.client,
            keys=self.keys,
            engine_run=run_job,
            settings=settings,
        )
        thread = threading.Thread(target=worker.run, daemon=True)
        thread.start()
        self.workers.append((worker, thread))
        return worker

    def submit(self, body: dict[str, Any]) -> uuid.UUID:
        with self.sessions() as session:
            spec = JobSpec.model_validate(body)
            job = service.submit_job(session, spec=spec, limits=DagLimits()).job
            stream.announce(self.client, self.keys, job.id)
            return job.id

    def job(self, job_id: uuid.UUID) -> Job:
        with self.sessions() as session:
            job = session.get(Job, job_id)
            assert job is not None
            return job

    def cancel(self, job_id: uuid.UUID) -> None:
        with self.sessions() as session:
            service.request_transition(session, job_id=job_id, action="cancel")

    def wait(self, job_id: uuid.UUID, ready: Any, deadline_s: float = 300) -> Job:
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            job = self.job(job_id)
            if ready(job):
                return job
            time.sleep(0.05)  # polling the worker threads' database writes
        raise TimeoutError(f"job {job_id}: not ready within {deadline_s} s")

    def stop_workers(self) -> None:
        for worker, thread in self.workers:
            worker.stop()
            worker.stop_running_jobs()
            thread.join(timeout=30)
            worker.close()  # its liveness thread ends before the services it beats to stop
        self.workers.clear()

    def close(self) -> None:
        try:
            self.stop_workers()
            self.spark.stop()
            self.engine.dispose()
        finally:
            self.exits.close()  # the embedded servers it started


def epoch_of(job: Job) -> int:
    return int(job.last_snapshot["epoch"]) if job.last_snapshot else 0


def throughput(stack: Stack, guarantee: str, seconds: float) -> tuple[float, list[Any]]:
    """Events/s that entered the DAG (committed epochs) over ``seconds`` after a warm-up,
    and the epochs' profiles the job stored with its timings."""
    job_id = stack.submit(pipeline(guarantee, rate=None, interval_ms=100))
    warm = stack.wait(job_id, lambda j: j.status == "RUNNING" and j.items_in > 0)
    warm = stack.wait(job_id, lambda j, base=warm.items_in: j.items_in > base)
    began, start_items = time.monotonic(), warm.items_in
    time.sleep(seconds)  # the job runs on the worker's threads meanwhile
    # Whole epochs only, from one commit to another: an epoch may take longer than seconds.
    now = stack.wait(job_id, lambda j, base=stack.job(job_id).items_in: j.items_in > base)
    elapsed = time.monotonic() - began
    stack.cancel(job_id)
    return (now.items_in - start_items) / elapsed, (now.timings or {}).get("epochs", [])


def watermark_lag(
    stack: Stack, seconds: float, rate: int, interval_ms: int, warmup_s: float
) -> list[float]:
    """Lag of the window vertex's coalesced watermark behind the clock, per metric tick,
    once the job has run ``warmup_s`` (the JVM compiles the epoch's code in its first
    epochs, and the backlog they build up drains)."""
    job_id = stack.submit(pipeline("exactly_once", rate=rate, interval_ms=interval_ms))
    stack.wait(job_id, lambda j: epoch_of(j) >= 2)
    time.sleep(warmup_s)  # the job runs on the worker's threads meanwhile
    began, lags, last = time.monotonic(), [], "$"
    events = stack.keys.job_events(job_id)
    while time.monotonic() - began < seconds:
        read: Any = stack.client.xread({events: last}, block=500) or []
        for _, entries in read:
            for entry_id, fields in entries:
                last = entry_id
                if fields.get("kind") == "metrics":
                    data = json.loads(fields["data"])
                    lag = data["vertices"]["windows"].get("lag_ms")
                    if lag is not None:
                        lags.append(float(lag))
    stack.cancel(job_id)
    return lags


def result_latency(
    stack: Stack, seconds: float, rate: int, interval_ms: int, warmup_s: float
) -> list[float]:
    """Ms from each window's closing to its result read from the sink's Redis stream."""
    name = f"latency-{uuid.uuid4().hex[:6]}"
    sink = {"name": "sink", "processor": "sink.redis_stream", "params": {"stream": name}}
    job_id = stack.submit(pipeline("exactly_once", rate=rate, interval_ms=interval_ms, sink=sink))
    key = stack.keys.user_stream(stack.job(job_id).principal, name)
    stack.wait(job_id, lambda j: epoch_of(j) >= 2)
    time.sleep(warmup_s)  # the job runs on the worker's threads meanwhile
    began, latencies, last = time.monotonic(), [], "$"
    while time.monotonic() - began < seconds:
        read: Any = stack.client.xread({key: last}, block=500) or []
        received_ms = time.time() * 1000
        for _, entries in read:
            for entry_id, fields in entries:
                last = entry_id
                latencies.append(received_ms - float(fields["window_end"]))
    stack.cancel(job_id)
    return latencies


def measure_latency(
    stack: Stack, seconds: float, rate: int, interval: int, warmup_s: float
) -> None:
    latencies = result_latency(stack, seconds, rate, interval, warmup_s)
    if not latencies:
        print(f"result latency, {interval} ms epochs: no window result in {seconds:.0f} s")
        return
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    print(
        f"result latency, {rate:,} events/s, {interval} ms epochs, {len(latencies):,} window "
        f"results after {warmup_s:.0f} s of warm-up: window closing -> result read "
        f"p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {max(latencies):.0f} ms"
    )


def recovery(stack: Stack) -> tuple[float, float]:
    """(loss -> claimed elsewhere, claimed -> first snapshot there), lease of 3 s."""
    stack.stop_workers()  # the job must land on ``first``
    first = stack.start_worker(lease_s=3)
    job_id = stack.submit(pipeline("exactly_once", rate=200_000, interval_ms=500))
    job = stack.wait(job_id, lambda j: j.status == "RUNNING" and epoch_of(j) >= 2)
    first.stop()  # no more heartbeats: its lease runs out
    first.stop_running_jobs()
    lost = time.monotonic()
    stack.start_worker(lease_s=3)
    claimed = stack.wait(job_id, lambda j: j.attempt == job.attempt + 1 and j.status == "RUNNING")
    at_claim = time.monotonic()
    stack.wait(job_id, lambda j: epoch_of(j) > epoch_of(claimed))
    done = time.monotonic()
    stack.cancel(job_id)
    return at_claim - lost, done - at_claim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--warmup", type=float, default=10.0,
        help="seconds of an untimed run of the throughput DAG first (the JVM compiles its code)",
    )  # fmt: skip
    parser.add_argument("--parts", default="throughput,lag,latency,recovery")
    parser.add_argument("--lag-interval-ms", type=int, default=1000)
    parser.add_argument("--lag-warmup", type=float, default=30.0)
    parser.add_argument("--latency-rate", type=int, default=1000)
    parser.add_argument("--latency-interval-ms", type=int, default=100)
    parser.add_argument(
        "--max-items-per-epoch", type=int, default=1_000_000,
        help="jetspark's epoch cap, and the Structured Streaming baseline's rows a batch",
    )  # fmt: skip
    args = parser.parse_args()
    os.environ.setdefault("JETSPARK_STREAM_EPOCH_INTERVAL_MS", "100")
    os.environ["JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH"] = str(args.max_items_per_epoch)
    # The baseline's batches are fixed (maxOffsetsPerTrigger): so are jetspark's epochs here,
    # not sized to 1 s (JETSPARK_STREAM_EPOCH_TARGET_MS), the same work per batch in both.
    os.environ.setdefault("JETSPARK_STREAM_EPOCH_TARGET_MS", "0")
    with tempfile.TemporaryDirectory(prefix="jetspark-bench-") as home:
        stack = Stack(Path(home))
        try:
            stack.start_worker()
            parts = set(args.parts.split(","))
            if "throughput" in parts:
                if args.warmup > 0:  # else the guarantee measured first pays the JIT for all
                    throughput(stack, "exactly_once", args.warmup)
                measure_throughput(stack, args.seconds, args.rounds, args.max_items_per_epoch)
            if "lag" in parts:
                measure_lag(stack, args.seconds, args.lag_interval_ms, args.lag_warmup)
            if "latency" in parts:
                measure_latency(
                    stack, args.seconds, args.latency_rate, args.latency_interval_ms,
                    args.lag_warmup,
                )  # fmt: skip
            if "recovery" in parts:
                reclaim, resume = recovery(stack)
                print(f"recovery, lease 3 s: lost -> reclaimed {reclaim:.1f} s, "
                      f"reclaimed -> first new snapshot {resume:.1f} s")  # fmt: skip
        finally:
            stack.close()


GUARANTEES = ("none", "at_least_once", "exactly_once")


def measure_throughput(stack: Stack, seconds: float, rounds: int, batch_rows: int) -> None:
    rates: dict[str, list[float]] = {g: [] for g in (*GUARANTEES, "structured_streaming")}
    profiles: dict[str, list[Any]] = {}
    programs = [*GUARANTEES, "structured_streaming"]
    for round_ in range(rounds):  # in turn, the order reversed every other round: the JVM
        # still gets faster for minutes (its JIT), which would favour whatever runs last
        for program in programs if round_ % 2 == 0 else reversed(programs):
            if program == "structured_streaming":
                rate = structured_streaming(stack, seconds, batch_rows, Path(stack.home))
            else:
                rate, profiles[program] = throughput(stack, program, seconds)
            rates[program].append(rate)
    median = {name: statistics.median(runs) for name, runs in rates.items()}
    spark = median["structured_streaming"]
    print(f"events/s, sequence -> insert_watermarks -> window(1 s, {KEYS} keys) -> sink "
          f"(load {os.getloadavg()[0]:.1f})")  # fmt: skip
    for name, runs in rates.items():
        print(f"  {name:<21} {median[name]:12,.0f}   runs {[round(r) for r in runs]}")
    for guarantee in GUARANTEES:
        ratio = f"{median[guarantee] / spark:.2f}" if spark > 0 else "-"
        print(f"  jetspark {guarantee} / Structured Streaming: {ratio}")
    none, exact = median["none"], median["exactly_once"]
    if none > 0:
        print(f"  ratio exactly_once / none: {exact / none:.2f}")
    print("where an epoch's time goes (the last round; s, medians of the steady epochs):")
    for guarantee, epochs in profiles.items():
        print_profile(guarantee, epochs)


PHASES = ("items", "plan_s", "run_s", "checkpoint_s", "await_commit_s", "snapshot_s",
          "commit_s", "spark_jobs", "spark_stages", "spark_s", "driver_s", "state_rows",
          "state_bytes")  # fmt: skip


def print_profile(guarantee: str, epochs: list[dict[str, Any]]) -> None:
    if not epochs:
        print(f"  {guarantee}: no epoch profile stored")
        return
    first, steady = epochs[0], summary(epochs)
    print(f"  {guarantee}: first epoch " + _phases(first))
    print(f"  {'':<{len(guarantee)}}  steady      " + _phases(steady))


def _phases(values: dict[str, Any]) -> str:
    shown = []
    for key in PHASES:
        value = values.get(key)
        if value is None:
            continue
        shown.append(f"{key.removesuffix('_s')}={value:.3f}" if key.endswith("_s")
                     else f"{key}={value:,}")  # fmt: skip
    return " ".join(shown)


def structured_streaming(stack: Stack, seconds: float, batch_rows: int, home: Path) -> float:
    """The same shape written by hand in Spark Structured Streaming, the baseline: a
    ``rate-micro-batch`` source of ``batch_rows`` a batch (1 s of event time each, as
    jetspark's unrated sequence stamps an epoch's items with one time), a watermark of lag
    0, tumbling 1 s windows over the same 1,000 keys, append mode into the ``noop`` sink
    (drops rows), checkpointed, on the same ``local[2]`` session, as fast as it goes.
    Events/s = input rows of the batches completed in ``seconds`` after two warm batches."""
    from pyspark.sql import functions as F

    session = stack.spark.newSession()
    session.conf.set("spark.sql.shuffle.partitions", "2")  # local[2]: the default 200 is slow
    events = (
        session.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", batch_rows)
        .option("numPartitions", 2)
        .option("advanceMillisPerBatch", 1000)
        .load()
    )
    windows = (
        events.withWatermark("timestamp", "0 seconds")
        .groupBy(F.window("timestamp", "1 second"), (F.col("value") % KEYS).alias("key"))
        .agg(F.count(F.lit(1)).alias("n"))
    )
    checkpoint = home / f"structured-{uuid.uuid4().hex[:6]}"
    query = (
        windows.writeStream.format("noop")
        .outputMode("append")
        .option("checkpointLocation", str(checkpoint))
        .start()
    )
    try:
        deadline = time.monotonic() + 300
        while len(query.recentProgress) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # polling the query's progress (warm-up: two batches)
        seen = len(query.recentProgress)
        began = time.monotonic()
        time.sleep(seconds)  # the query runs on its own thread meanwhile
        progress = query.recentProgress
        elapsed = time.monotonic() - began
        rows = sum(p.numInputRows for p in progress[seen:])
        return rows / elapsed
    finally:
        query.stop()


def measure_lag(stack: Stack, seconds: float, interval: int, warmup_s: float) -> None:
    lags = watermark_lag(stack, seconds, rate=100_000, interval_ms=interval, warmup_s=warmup_s)
    p50, p99 = percentile(lags, 0.5), percentile(lags, 0.99)
    print(
        f"watermark lag at the window, {interval} ms epochs, {len(lags)} ticks "
        f"after {warmup_s:.0f} s of warm-up: "
        f"p50 {p50:.0f} ms, p99 {p99:.0f} ms ({p99 / interval:.2f} x the epoch interval), "
        f"max {max(lags):.0f} ms"
    )


if __name__ == "__main__":
    main()
