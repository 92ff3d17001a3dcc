"""Where an epoch's time goes: its phases, its Spark jobs and the state it wrote.

Every epoch is timed on the driver (``time.monotonic``, no Spark call): ``plan`` (its ranges,
written to PostgreSQL under exactly-once), ``run`` (the vertices: building the plans, py4j
and the Spark jobs they trigger), ``checkpoint`` (cutting the carried state's lineage),
``await_commit`` (waiting for the previous epoch's commit), and on the commit thread
``snapshot`` (the state to Redis: rows, bytes) and ``commit`` (the epoch log's transaction).

Some epochs (the first ``FIRST`` and every ``SAMPLE_EVERY``-th) also list their Spark jobs
from Spark's status store: how many jobs and stages, the seconds between each job's
submission and completion (``spark_s``), and so the driver's own time between them
(``driver_s``: ``run + checkpoint - spark_s``: planning, py4j round trips, Python). That
costs a few py4j calls per job, hence only sampled, and read on the commit thread, after the
listener bus has caught up.

The profiles go to ``JobControl.timings["epochs"]`` (the first ``FIRST`` and the last
``LAST``), which the epoch log stores with the job, so a running stream says where its time
goes (the job's timings, its page's timeline) and ``bench.streaming`` prints it.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any

import structlog
from pydantic import Field

from jetspark.metrics.epochs import EpochTiming

if TYPE_CHECKING:
    from pyspark import SparkContext

log = structlog.get_logger("jetspark.stream")

FIRST = 3
LAST = 10
SAMPLE_EVERY = 10
SNAPSHOT_DESCRIPTION = "jetspark snapshot"
"""The commit thread's Spark jobs (the state read out for Redis) carry this description, so
an epoch's Spark jobs are told from the previous snapshot's running beside them."""


class EpochProfile(EpochTiming):
    """One epoch's seconds per phase (see the module), its items and state written, and what
    measuring it needs (not stored)."""

    sampled: bool = Field(default=False, exclude=True)
    """Its Spark jobs are listed."""
    job_ids: set[int] = Field(default_factory=set, exclude=True)
    """Spark job ids launched while the epoch ran (sampled epochs only)."""

    def to_json(self) -> dict[str, Any]:
        data = self.model_dump()
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in data.items()}


class EpochProfiles:
    """The profiles kept for a run: the first ``FIRST`` epochs and the last ``LAST``."""

    def __init__(self, timings: dict[str, Any], context: SparkContext, job_group: str) -> None:
        self.timings, self.context, self.group = timings, context, job_group
        self.first: list[dict[str, Any]] = []
        self.last: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def sampled(self, epoch: int, restarted_at: int) -> bool:
        return epoch - restarted_at <= FIRST or epoch % SAMPLE_EVERY == 0

    def job_ids(self) -> set[int]:
        """The group's Spark job ids now (two py4j calls: the array read as one string)."""
        try:
            jvm: Any = self.context._jvm
            tracker = self.context._jsc.statusTracker()
            text = str(jvm.java.util.Arrays.toString(tracker.getJobIdsForGroup(self.group)))
            return {int(n) for n in re.findall(r"\d+", text)}
        except Exception as error:  # a profile explains a run, it never fails it
            log.debug("epoch profile: job ids lost", error=str(error))
            return set()

    def spark_time(self, profile: EpochProfile) -> None:
        """Fill in the sampled epoch's Spark jobs, stages and seconds, and so its driver
        time, from Spark's status store (its own snapshot's jobs left out)."""
        if not profile.job_ids:
            profile.spark_jobs, profile.spark_stages, profile.spark_s = 0, 0, 0.0
        else:
            try:
                store = self.context._jsc.sc().statusStore()
                jobs = stages = 0
                millis = 0
                for job_id in sorted(profile.job_ids):
                    data = store.job(job_id)
                    if SNAPSHOT_DESCRIPTION in str(data.description()):
                        continue
                    submitted, completed = data.submissionTime(), data.completionTime()
                    if submitted.isDefined() and completed.isDefined():
                        millis += completed.get().getTime() - submitted.get().getTime()
                    jobs += 1
                    stages += int(data.stageIds().size())
                profile.spark_jobs, profile.spark_stages = jobs, stages
                profile.spark_s = millis / 1000
            except Exception as error:
                log.debug("epoch profile: spark jobs lost", error=str(error))
                return
        profile.driver_s = max(0.0, profile.run_s + profile.checkpoint_s - profile.spark_s)

    def record(self, profile: EpochProfile) -> None:
        """Keep the profile (on the commit thread, once the epoch committed)."""
        if profile.sampled:
            self.spark_time(profile)
        entry = profile.to_json()
        with self.lock:
            if len(self.first) < FIRST:
                self.first.append(entry)
            else:
                self.last = [*self.last[-(LAST - 1) :], entry]
            self.timings["epochs"] = [*self.first, *self.last]
        log.debug("epoch profile", **entry)


def summary(epochs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of the steady epochs' phases (all but the first ``FIRST``), for a report."""
    steady = epochs[FIRST:] or epochs
    keys = [key for key in EpochTiming.model_fields if key != "epoch"]
    found: dict[str, Any] = {}
    for key in keys:
        values = sorted(e[key] for e in steady if e.get(key) is not None)
        if values:
            found[key] = values[len(values) // 2]
    return found
