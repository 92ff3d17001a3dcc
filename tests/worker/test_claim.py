"""A job is claimed promptly however its announcement meets its row: locked, late or lost.

The reconciler (which re-announces queued jobs every few seconds) is switched off here, so a
job that reaches a worker only through it never gets claimed and the test fails at its deadline.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import redis
from sqlalchemy.orm import Session, sessionmaker

from jetspark.dag.model import JobSpec
from jetspark.db.tables import Job
from jetspark.jobs import orchestration, service
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from jetspark.settings import DagLimits
from tests.worker.conftest import FAST, causes, drive_until, status_of
from worker.loop import Worker

TINY = {
    "name": "tiny",
    "dag": {
        "vertices": [
            {
                "name": "items",
                "processor": "source.items",
                "params": {"items": [{"n": 1}, {"n": 2}]},
            },
            {"name": "out", "processor": "sink.results"},
        ],
        "edges": [{"from": "items", "to": "out"}],
    },
    "config": {"members": 1, "local_parallelism": 1},
}


def queue(sessions: sessionmaker[Session]) -> uuid.UUID:
    """Queue a job as the API does, without announcing it yet."""
    with sessions() as session:
        job = service.submit_job(session, spec=JobSpec.model_validate(TINY), limits=DagLimits())
        return job.job.id


def settled(worker: Worker) -> Worker:
    """The worker after its first turn: the reconciler's one pass at start-up is behind it."""
    worker.step()
    return worker


def test_submit_stamps_the_announcement_in_the_queueing_transaction(
    sessions: sessionmaker[Session],
) -> None:
    # No later UPDATE of the row (which would lock it while a worker claims) is needed.
    job_id = queue(sessions)
    with sessions() as session:
        job = session.get(Job, job_id)
        assert job is not None and job.announced_at is not None


def test_an_announcement_read_while_the_row_is_locked_still_leads_to_a_claim(
    make_worker: Callable[..., Worker],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
) -> None:
    # Only the stream entry can bring the job: no polling of PostgreSQL, no reconciler.
    worker = settled(
        make_worker("w-locked", FAST.model_copy(update={"claim_unannounced_after_s": 3600}))
    )
    job_id = queue(sessions)
    with sessions() as holder:
        orchestration.load_for_update(holder, job_id)  # another transaction writes the row
        stream.announce(redis_client, keys, job_id)
        worker.step()  # reads the entry while the row is locked
        assert status_of(sessions, job_id) == "QUEUED"
        holder.commit()
    drive_until(
        [worker],
        lambda: status_of(sessions, job_id) == "COMPLETED" and not worker.held,
        deadline_s=60,
        what="claimed from the entry read while the row was locked",
    )
    assert causes(sessions, job_id).count("claimed by worker w-locked") == 1
    assert not redis_client.xpending(keys.jobs_stream, keys.workers_group)["pending"]


def test_a_lost_announcement_costs_one_poll_not_a_reconcile_period(
    make_worker: Callable[..., Worker], sessions: sessionmaker[Session]
) -> None:
    worker = settled(
        make_worker("w-poll", FAST.model_copy(update={"claim_unannounced_after_s": 0}))
    )
    job_id = queue(sessions)  # committed, but its XADD never happened (Redis blinked)
    drive_until(
        [worker],
        lambda: status_of(sessions, job_id) == "COMPLETED",
        deadline_s=60,
        what="claimed from PostgreSQL without an announcement",
    )
    assert causes(sessions, job_id).count("claimed by worker w-poll") == 1
