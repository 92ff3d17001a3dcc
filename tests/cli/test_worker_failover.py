"""Two real ``jetspark worker`` processes with the default lease, an exactly-once windowed
stream between them: the holder hung (SIGSTOP) is judged by its lease alone and, woken,
commits nothing; the holder SIGKILLed is noticed at once (its liveness session ended) and
its stream goes on on the other worker. The windows stay exact throughout."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Callable

import pytest
import redis
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import Job, JobTransition
from jetspark.jobs import orchestration
from jetspark.jobs.status import JobStatus
from jetspark.queue.keys import Keys
from jetspark.settings import WorkerSettings
from tests.cli.conftest import log_of, poll
from tests.cli.worker_processes import (
    WorkerProcess,
    job_when,
    read_job,
    submit,
    wait_heartbeating,
)
from tests.worker.test_streaming import assert_exact_windows_so_far, windowed_stream

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

DEFAULTS = WorkerSettings()
NOTICED_WITHIN_S = 10.0
"""Two thirds of the default lease (15 s, renewed every 1 s: it lapses 14 s after a death at
the soonest), so never by the lease: a dead worker's jobs are requeued about a second after
its death; the rest is room for a loaded machine."""
assert DEFAULTS.lease_s - DEFAULTS.heartbeat_s > NOTICED_WITHIN_S  # never by the lease
RECOVERY_DEADLINE_S = 180.0  # a restore and an epoch on two shared, loaded cores


def transitions(sessions: sessionmaker[Session], job_id: uuid.UUID) -> list[JobTransition]:
    with sessions() as session:
        rows = session.execute(
            select(JobTransition).where(JobTransition.job_id == job_id).order_by(JobTransition.id)
        )
        return list(rows.scalars())


def snapshot_id(job: Job) -> int:
    return int(job.last_snapshot["snapshot_id"]) if job.last_snapshot else 0


def test_a_hung_worker_waits_for_its_lease_and_a_dead_one_is_noticed_at_once(
    start_worker: Callable[..., WorkerProcess],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
) -> None:
    defaults = {  # what an operator runs: the default lease and heartbeat
        "JETSPARK_WORKER_LEASE_S": str(DEFAULTS.lease_s),
        "JETSPARK_WORKER_HEARTBEAT_S": str(DEFAULTS.heartbeat_s),
        "JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH": "150",
    }
    workers = [start_worker("w0", **defaults), start_worker("w1", **defaults)]
    wait_heartbeating(redis_client, keys, workers)
    body = windowed_stream("failover", count=None, members=1)
    job_id = submit(sessions, redis_client, keys, body)

    def logs() -> list[str]:
        return [log_of(w.log) for w in workers]

    def committed_after(seen: int, by: WorkerProcess) -> Callable[[], Job | None]:
        def ready(job: Job) -> bool:
            assert job.status not in {"FAILED", "CANCELLED"}, (job.error_message, logs())
            return job.status == "RUNNING" and by.owns(job.worker) and snapshot_id(job) > seen

        return job_when(sessions, job_id, ready)

    first = poll(
        job_when(sessions, job_id, lambda j: j.status == "RUNNING" and snapshot_id(j) > 0),
        deadline_s=RECOVERY_DEADLINE_S,
        what="the stream's first snapshot",
        every_s=0.2,
    )
    hung = next(w for w in workers if w.owns(first.worker))
    other = next(w for w in workers if w is not hung)

    # 1. Hung: its session and lock live on, so only its lease can judge it.
    os.killpg(hung.pid, signal.SIGSTOP)
    stopped = time.monotonic()
    taken = poll(
        committed_after(snapshot_id(read_job(sessions, job_id)), other),
        deadline_s=DEFAULTS.lease_s + RECOVERY_DEADLINE_S,
        what="the other worker resumed the stream after the lease",
        every_s=0.2,
    )
    rules = [t.rule for t in transitions(sessions, job_id)]
    assert "holder-lost" not in rules, "a hung worker was taken for dead"
    assert "lease-expired" in rules
    assert time.monotonic() - stopped >= DEFAULTS.lease_s
    os.killpg(hung.pid, signal.SIGCONT)
    poll(
        lambda: (
            "lease refused: stopping job" in log_of(hung.log)
            or "job no longer ours" in log_of(hung.log)
        ),
        deadline_s=60,
        what="the woken worker told its job is no longer its",
    )
    takeover = max(t.id for t in transitions(sessions, job_id) if t.rule == "lease-expired")
    assert not [t for t in transitions(sessions, job_id) if t.id > takeover and hung.owns(t.worker)]

    # 2. Dead: its session ends with it; the woken worker notices and takes the stream over.
    seen = snapshot_id(read_job(sessions, job_id))
    os.killpg(other.pid, signal.SIGKILL)
    killed = time.monotonic()
    other.process.wait(timeout=10)
    poll(
        lambda: any(t.rule == "holder-lost" for t in transitions(sessions, job_id)),
        deadline_s=NOTICED_WITHIN_S,
        what=f"the dead worker's stream requeued well within the {DEFAULTS.lease_s:g} s lease",
        every_s=0.05,
    )
    noticed_s = time.monotonic() - killed
    lost = next(t for t in transitions(sessions, job_id) if t.rule == "holder-lost")
    assert lost.from_status in {"STARTING", "RUNNING"} and lost.to_status == "QUEUED"
    assert hung.owns(lost.worker), "the surviving worker is the judge"
    resumed = poll(
        committed_after(seen, hung),
        deadline_s=RECOVERY_DEADLINE_S,
        what="the surviving worker committed the next snapshot",
        every_s=0.2,
    )
    assert resumed.attempt == taken.attempt + 1
    timings = resumed.timings or {}
    assert timings["holder_lost"]["attempt"] == taken.attempt
    assert {"restoring", "restored", "first_snapshot"} <= set(timings)
    recovered_s = time.monotonic() - killed
    print(f"kill -> requeued {noticed_s:.2f} s, -> next snapshot {recovered_s:.1f} s")

    # 3. The windows: each once, exact, none missing up to the newest.
    with sessions() as session:
        orchestration.transition(session, job_id, JobStatus.CANCELLED, cause="test ended")
        session.commit()
    newest = assert_exact_windows_so_far(sessions, job_id)
    assert newest >= 2000, "the stream went on after both faults"
