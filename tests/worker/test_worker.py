"""The worker lifecycle against real PostgreSQL, Redis and Spark."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import redis
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker
from structlog.testing import capture_logs

from jetspark.db.tables import Job, JobResult
from jetspark.jobs import orchestration, service
from jetspark.jobs.status import JobStatus
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from tests.worker.conftest import (
    FAST,
    LONG_JOB,
    causes,
    drive_until,
    status_of,
    word_count_body,
)
from worker import job_attempt
from worker.loop import Worker


def test_word_count_runs_to_completion_with_exact_results(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
) -> None:
    body = word_count_body()
    job_id = submit(body)
    worker = make_worker("w-complete")
    drive_until([worker], lambda: status_of(sessions, job_id) == "COMPLETED", what="completed")
    with sessions() as session:
        rows = session.execute(
            select(JobResult.item).where(JobResult.job_id == job_id).order_by(JobResult.seq)
        ).scalars()
        got = {item["key"]: item["count"] for item in rows}
        job = session.get(Job, job_id)
        lines = [item["line"] for item in body["dag"]["vertices"][0]["params"]["items"]]
        assert job is not None and job.attempt == 1
        assert (job.items_in, job.items_out) == (len(lines), len(got))
    assert got == dict(Counter(word for line in lines for word in line.split()))
    assert causes(sessions, job_id)[-1] == "all vertices completed"


def test_a_lease_renewal_refused_once_the_job_ended_does_not_stop_it(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker's beat may land between the job's COMPLETED write and its thread's end:
    the renewal is refused (the job is no longer running), which is not a lost lease."""
    worker = make_worker("w-ending")
    written = job_attempt._complete

    def complete_then_beat(*args: Any, **kwargs: Any) -> None:
        written(*args, **kwargs)
        worker.heartbeat()  # the beat, in the window before the job's thread is done

    monkeypatch.setattr(job_attempt, "_complete", complete_then_beat)
    with capture_logs() as lines:
        job_id = submit(word_count_body())
        drive_until(
            [worker],
            lambda: status_of(sessions, job_id) == "COMPLETED" and not worker.held,
            what="completed and let go",
        )
    events = [line["event"] for line in lines if line.get("job") == str(job_id)]
    assert events[0] == "job claimed" and events[-1] == "job completed", events
    assert "lease refused: stopping job" not in events


def test_a_failing_job_fails_with_the_vertex_and_the_worker_goes_on(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
) -> None:
    bad = {
        "name": "bad-cast",
        "dag": {
            "vertices": [
                {"name": "src", "processor": "source.items", "params": {"items": [{"v": "abc"}]}},
                {
                    "name": "parse",
                    "processor": "map",
                    "params": {"select": {"n": "cast(v AS int)"}},
                },
                {"name": "out", "processor": "sink.results"},
            ],
            "edges": [{"from": "src", "to": "parse"}, {"from": "parse", "to": "out"}],
        },
    }
    bad_id, good_id = submit(bad), submit(word_count_body())
    worker = make_worker("w-fail")
    drive_until(
        [worker],
        lambda: (
            status_of(sessions, bad_id) == "FAILED" and status_of(sessions, good_id) == "COMPLETED"
        ),
        what="one failed, one completed",
    )
    with sessions() as session:
        job = session.get(Job, bad_id)
        assert job is not None and job.error_message is not None
        assert (
            "vertex 'out' failed" in job.error_message and "CAST_INVALID_INPUT" in job.error_message
        )


def test_cancel_stops_a_running_endless_job_at_once(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
) -> None:
    job_id = submit(LONG_JOB)
    worker = make_worker("w-cancel")
    drive_until([worker], lambda: status_of(sessions, job_id) == "RUNNING", what="running")
    with sessions() as session:
        service.request_transition(session, job_id=job_id, action="cancel")
    import time

    cancelled_at = time.monotonic()
    drive_until([worker], lambda: not worker.held, deadline_s=60, what="job thread stopped")
    # Within seconds (2 s unloaded); the bound leaves a loaded machine room.
    assert time.monotonic() - cancelled_at < 15
    assert status_of(sessions, job_id) == "CANCELLED"


def test_an_idle_entry_is_reclaimed_and_claimed_exactly_once(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
) -> None:
    job_id = submit(word_count_body())
    # A worker that read the entry, claimed the job, then died without a word.
    (entry,) = stream.read_new(redis_client, keys, "ghost", count=1, block_ms=100)
    with sessions() as session:
        assert orchestration.claim(session, job_id, worker="ghost", lease=timedelta(seconds=1))
        session.commit()
    survivor = make_worker("w-survivor")
    drive_until([survivor], lambda: status_of(sessions, job_id) == "COMPLETED", what="reclaimed")
    history = causes(sessions, job_id)
    assert history.count("claimed by worker w-survivor") == 1
    assert "lease of worker ghost expired" in history
    with sessions() as session:
        job = session.get(Job, job_id)
        assert job is not None and job.attempt == 2
    assert entry.job_id == job_id


def test_stale_writes_are_refused_after_a_reclaim(
    submit: Callable[[dict[str, Any]], uuid.UUID], sessions: sessionmaker[Session]
) -> None:
    job_id = submit(word_count_body())
    with sessions() as session:
        first = orchestration.claim(session, job_id, worker="a", lease=timedelta(seconds=-1))
        assert first is not None
        stale = first.fencing_token
        session.commit()
        assert orchestration.claim(session, job_id, worker="b", lease=timedelta(seconds=30))
        session.commit()
        try:
            orchestration.transition(
                session, job_id, JobStatus.COMPLETED, cause="late", fencing_token=stale
            )
            raise AssertionError("a stale token was accepted")
        except orchestration.StaleFencingToken:
            session.rollback()


def test_concurrent_claims_have_exactly_one_winner(
    submit: Callable[[dict[str, Any]], uuid.UUID], sessions: sessionmaker[Session]
) -> None:
    job_id = submit(word_count_body())
    winners: list[str] = []
    barrier = threading.Barrier(8)

    def contend(name: str) -> None:
        barrier.wait()
        with sessions() as session:
            if orchestration.claim(session, job_id, worker=name, lease=timedelta(seconds=30)):
                winners.append(name)
            session.commit()

    threads = [threading.Thread(target=contend, args=(f"c{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(winners) == 1


def test_reconciler_reannounces_what_redis_lost(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
) -> None:
    job_id = submit(word_count_body())
    redis_client.delete(keys.jobs_stream)  # Redis restarted empty
    worker = make_worker("w-reconcile")
    worker.settings.reannounce_after_s = 0
    worker.reconcile()
    # Every queued job of the shared test database is re-announced, not only this one.
    entries = stream.read_new(redis_client, keys, "probe", count=100_000, block_ms=100)
    assert job_id in {e.job_id for e in entries}


def test_a_job_ending_wakes_a_worker_whose_slots_are_all_taken(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
) -> None:
    worker = make_worker("w-slots", FAST.model_copy(update={"max_concurrent_jobs": 1}))
    first, second = submit(word_count_body()), submit(word_count_body())
    drive_until([worker], lambda: first in worker.held, what="the first job held")
    worker.slot_freed.clear()
    # Not stepped meanwhile: only the job's own thread ending can set it.
    assert worker.slot_freed.wait(60), "the job's thread ending wakes the loop"
    assert status_of(sessions, first) == "COMPLETED"
    drive_until([worker], lambda: status_of(sessions, second) == "COMPLETED", what="second done")


def test_a_lost_workers_job_starts_at_once_on_a_worker_whose_slots_are_all_taken(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
) -> None:
    survivor = make_worker("w-full", FAST.model_copy(update={"max_concurrent_jobs": 1}))
    busy = submit(LONG_JOB)
    drive_until([survivor], lambda: busy in survivor.held, what="the survivor's slot taken")
    # A job that ran on a worker that died: requeued (as the liveness judge does), then a
    # new job queued behind it, which must wait for a free slot.
    lost = submit(LONG_JOB)
    waiting = submit(word_count_body())
    stream.read_new(redis_client, keys, "ghost", count=10, block_ms=100)  # the ghost's reads
    with sessions() as session:
        assert orchestration.claim(session, lost, worker="ghost", lease=timedelta(seconds=60))
        session.commit()
    with sessions() as session:
        assert orchestration.requeue_lost(
            session, "ghost", by="judge", cause="worker ghost lost", last_seen=None
        ) == [lost]
        session.commit()
    drive_until([survivor], lambda: lost in survivor.held, what="the takeover claimed")
    for _ in range(5):  # every slot and the takeover slot are taken: nothing more is claimed
        survivor.step()
    assert status_of(sessions, waiting) == "QUEUED"
    assert set(survivor.held) == {busy, lost}
    for job_id in (busy, lost):
        with sessions() as session:
            service.request_transition(session, job_id=job_id, action="cancel")
    drive_until([survivor], lambda: status_of(sessions, waiting) == "COMPLETED", what="the next")
