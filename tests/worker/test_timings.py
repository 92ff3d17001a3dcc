"""A finished job's view explains where its time went: phases in order, its Spark jobs."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from api.schemas import JobView
from jetspark.db.tables import Job
from tests.worker.conftest import drive_until, status_of, word_count_body
from worker.loop import Worker
from worker.timings import recovery_phases


def test_a_finished_jobs_view_carries_its_timings(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
) -> None:
    worker = make_worker("w-timings")
    job_id = submit(word_count_body())
    drive_until([worker], lambda: status_of(sessions, job_id) == "COMPLETED", what="completed")
    with sessions() as session:
        job = session.get(Job, job_id)
        assert job is not None
        timings = JobView.of(job).timings
    assert timings is not None
    phases = [
        timings.queued,
        timings.claimed,
        timings.running,
        timings.planned,
        timings.computed,
        timings.results_written,
        timings.finished,
    ]
    assert all(phases), phases
    assert phases == sorted(phases)  # type: ignore[type-var]
    assert timings.spark_job_group == f"job-{job_id}"
    assert timings.spark_application == worker.spark.sparkContext.applicationId
    assert timings.spark_jobs, "the Spark jobs it ran"
    ids = [spark_job.id for spark_job in timings.spark_jobs]
    assert ids == sorted(set(ids))
    for spark_job in timings.spark_jobs:
        assert spark_job.stages
        if spark_job.submitted is not None:
            assert timings.claimed <= spark_job.submitted <= timings.finished  # type: ignore[operator]


def test_recovery_phases_split_a_takeover_from_the_lost_holders_last_beat() -> None:
    def at(seconds: float) -> str:
        return f"2026-01-01T00:00:{seconds:06.3f}+00:00"

    resumed = {
        "holder_lost": {"worker": "w", "attempt": 1, "last_seen": at(0), "noticed": at(0.6)},
        "queued": at(0.6),
        "claimed": at(0.7),
        "running": at(0.9),
        "planned": at(1.0),
        "restoring": at(1.1),
        "restored": at(1.5),
        "first_snapshot": at(3.0),
    }
    assert recovery_phases(resumed) == [
        ("detect", 0.6),
        ("claim", 0.1),
        ("start", 0.2),
        ("plan", 0.1),
        ("setup", 0.1),
        ("restore", 0.4),
        ("first_snapshot", 1.5),
        ("total", 3.0),
    ]
    first_run = {
        k: v for k, v in resumed.items() if k not in {"holder_lost", "restoring", "restored"}
    }
    assert recovery_phases(first_run) == [
        ("claim", 0.1),
        ("start", 0.2),
        ("plan", 0.1),
        ("first_snapshot", 2.0),
        ("total", 2.4),
    ]
