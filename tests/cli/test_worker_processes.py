"""Real `jetspark worker` processes: a SIGKILLed worker's job is claimed once by another."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable

import psutil
import pytest
import redis
from sqlalchemy.orm import Session, sessionmaker

from jetspark.jobs import service
from jetspark.queue.keys import Keys
from tests.cli.conftest import EXAMPLE, is_gone, log_of, poll
from tests.cli.worker_processes import (
    LEASE_S,
    WorkerProcess,
    job_when,
    read_job,
    submit,
    wait_heartbeating,
)
from tests.worker.conftest import LONG_JOB, causes

# Two Spark JVMs start cold at once (COLD_START_DEADLINE_S alone is 300 s on a loaded machine).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_two_workers_share_the_queue_and_a_sigkilled_workers_job_is_claimed_once_by_another(
    start_worker: Callable[..., WorkerProcess],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
) -> None:
    grace = {"JETSPARK_SHUTDOWN_GRACE_S": "2"}
    workers = [start_worker("one", **grace), start_worker("two", **grace)]  # cold, at once
    wait_heartbeating(redis_client, keys, workers)
    share_the_queue(workers, sessions, redis_client, keys)

    job_id = submit(sessions, redis_client, keys, LONG_JOB)
    running = poll(
        job_when(sessions, job_id, lambda job: job.status == "RUNNING"),
        deadline_s=60,
        what="the long job RUNNING",
    )
    holder = running.worker
    a, b = workers if workers[0].owns(holder) else workers[::-1]
    assert a.owns(holder)
    a_tree = psutil.Process(a.pid).children(recursive=True)

    os.kill(a.pid, signal.SIGKILL)
    a.process.wait(timeout=10)
    # Its Spark JVM sees the driver's pipe close and exits on its own.
    poll(lambda: all(is_gone(p) for p in a_tree), deadline_s=30, what="worker A's JVM gone")

    reclaimed = poll(
        job_when(sessions, job_id, lambda job: job.status == "RUNNING" and b.owns(job.worker)),
        deadline_s=LEASE_S + 30,
        what="worker B running the job",
    )
    assert reclaimed.attempt == 2
    history = causes(sessions, job_id)
    claims = [cause for cause in history if cause.startswith("claimed by worker ")]
    assert claims == [f"claimed by worker {holder}", f"claimed by worker {reclaimed.worker}"]
    # The loss is recorded once, by B's liveness thread (A's session ended with it), well
    # before A's lease would have run out: no expiry is recorded.
    assert sum(cause.startswith(f"worker {holder} lost") for cause in history) == 1, history
    assert not [cause for cause in history if "expired" in cause], history

    with sessions() as session:
        service.request_transition(session, job_id=job_id, action="cancel")
    assert read_job(sessions, job_id).status == "CANCELLED"
    # B takes one job at a time: it runs the next one only once it has let go of the long job.
    follow_up = submit(sessions, redis_client, keys, json.loads(EXAMPLE.read_text()))
    done = poll(
        job_when(sessions, follow_up, lambda job: job.status in {"COMPLETED", "FAILED"}),
        deadline_s=90,
        what="the next job finished on worker B",
    )
    assert done.status == "COMPLETED" and b.owns(done.worker), log_of(b.log)
    assert read_job(sessions, job_id).status == "CANCELLED"
    assert causes(sessions, job_id)[-1] == "cancel requested"

    # SIGTERM stops B promptly: the batch job it was running gets its grace period, then is
    # handed over (QUEUED again at once, not failed, not left RUNNING until its lease ends).
    last = submit(sessions, redis_client, keys, LONG_JOB)
    poll(
        job_when(sessions, last, lambda job: job.status == "RUNNING" and b.owns(job.worker)),
        deadline_s=60,
        what="worker B running another long job",
    )
    b.process.send_signal(signal.SIGTERM)
    assert b.process.wait(timeout=30) == 0, log_of(b.log)
    left = read_job(sessions, last)
    assert left.status == "QUEUED" and left.error_type is None, causes(sessions, last)
    assert causes(sessions, last)[-1].startswith("worker stopping"), causes(sessions, last)


def share_the_queue(
    workers: list[WorkerProcess],
    sessions: sessionmaker[Session],
    client: redis.Redis,
    keys: Keys,
) -> None:
    """Two workers, each its own Spark application, on one queue: every job is claimed once,
    by one of them, and both take jobs."""
    body = json.loads(EXAMPLE.read_text())
    ids = [submit(sessions, client, keys, body) for _ in range(10)]
    for job_id in ids:
        done = poll(
            job_when(sessions, job_id, lambda job: job.status in {"COMPLETED", "FAILED"}),
            deadline_s=120,
            what="ten word counts done on two workers",
        )
        assert done.status == "COMPLETED", done.error_message
    holders = []
    for job_id in ids:
        job = read_job(sessions, job_id)
        claims = [c for c in causes(sessions, job_id) if c.startswith("claimed by worker ")]
        assert job.attempt == 1 and claims == [f"claimed by worker {job.worker}"], claims
        (holder,) = [w for w in workers if w.owns(job.worker)]
        holders.append(holder.pid)
    assert set(holders) == {w.pid for w in workers}, holders
