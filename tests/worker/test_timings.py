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
    assert timings.spark_jobs, "the Spark jobs it ran"
    ids = [spark_job.id for spark_job in timings.spark_jobs]
    assert ids == sorted(set(ids))
    for spark_job in timings.spark_jobs:
        assert spark_job.stages
        if spark_job.submitted is not None:
            assert timings.claimed <= spark_job.submitted <= timings.finished  # type: ignore[operator]
