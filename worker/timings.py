"""A job's phases with their times, kept with the job so a slow run can be explained.

The worker stamps ``queued`` (when the job was queued), ``claimed``, ``running``; the engine
``planned`` and ``computed`` (its results in the worker); the final write ``results_written``
and ``finished``. ``spark_jobs`` lists the Spark jobs of the job's group with their stages
and when their first stage was submitted, read from Spark's status tracker (no listener of
ours runs on the scheduler's thread).

A stream's epoch log adds ``restoring`` and ``restored`` (with ``restored_snapshot``),
``first_epoch`` and ``first_snapshot`` (its first commits), and stores the timings with the
job at its first snapshot; a job requeued because its worker was lost carries
``holder_lost`` (``worker``, ``last_seen``: its last beat, ``noticed``). ``recovery_phases``
turns them into seconds per phase.
"""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import structlog

from worker.engine.contract import stamp as stamp

if TYPE_CHECKING:
    from pyspark import SparkContext

log = structlog.get_logger("jetspark.worker")


_STAMPS = (
    ("holder_last_seen", ""),
    ("holder_noticed", "detect"),
    ("claimed", "claim"),
    ("running", "start"),
    ("planned", "plan"),
    ("restoring", "setup"),
    ("restored", "restore"),
    ("first_snapshot", "first_snapshot"),
)
"""A (re)start's stamps in order, each with the phase that ends at it."""


def recovery_phases(timings: dict[str, Any]) -> list[tuple[str, float]]:
    """Seconds of each phase from the lost holder's last beat (else the queueing) to the
    attempt's first snapshot: between each two consecutive stamps that are known, named by
    the phase that ends at the second (a first attempt, which restores nothing, goes from
    ``plan`` to ``first_snapshot``); ``total`` last."""
    lost = timings.get("holder_lost") or {}
    known = {
        **timings,
        "holder_last_seen": lost.get("last_seen"),
        "holder_noticed": lost.get("noticed") or timings.get("queued"),
    }
    times = [
        (phase, datetime.fromisoformat(known[name]))
        for name, phase in _STAMPS
        if isinstance(known.get(name), str)
    ]
    phases = [
        (phase, round((end - begin).total_seconds(), 3))
        for (_, begin), (phase, end) in pairwise(times)
    ]
    if "first_snapshot" in timings and len(times) > 1:
        phases.append(("total", round((times[-1][1] - times[0][1]).total_seconds(), 3)))
    return phases


def spark_jobs(context: SparkContext, job_group: str, since: str | None) -> list[dict[str, Any]]:
    """The Spark jobs of ``job_group`` submitted at or after ``since``, oldest first.

    Never raises: timings explain a run, they never fail it."""
    try:
        tracker = context.statusTracker()
        jvm_tracker = context._jsc.statusTracker()  # the JVM's: stage submission times
        floor = datetime.fromisoformat(since).timestamp() * 1000 if since else 0.0
        found = []
        for job_id in sorted(tracker.getJobIdsForGroup(job_group)):
            info = tracker.getJobInfo(job_id)
            if info is None:
                continue
            submitted = [
                int(stage.submissionTime())
                for stage_id in info.stageIds
                if (stage := jvm_tracker.getStageInfo(stage_id)) is not None
                and stage.submissionTime() > 0
            ]
            first = min(submitted) if submitted else None
            if first is not None and first < floor:
                continue  # an earlier attempt's, in the same job group
            found.append(
                {
                    "id": job_id,
                    "stages": sorted(info.stageIds),
                    "status": info.status,
                    "submitted": (
                        datetime.fromtimestamp(first / 1000, UTC).isoformat()
                        if first is not None
                        else None
                    ),
                }
            )
        return found
    except Exception as error:
        log.warning("spark job timings lost", group=job_group, error=str(error))
        return []
