"""One epoch of a stream as the job's timings keep it: measured by the worker
(``worker/engine/streaming/profile.py``), stored with the job, shown by the API."""

from __future__ import annotations

from pydantic import BaseModel


class EpochTiming(BaseModel):
    """Where one epoch of a stream spent its seconds (``worker/engine/streaming/profile.py``).

    ``run_s`` covers the vertices (planning, py4j and the Spark jobs they ran); on sampled
    epochs ``spark_s`` is the Spark jobs' own time and ``driver_s`` the rest. ``snapshot_s``
    and the state written are set on epochs that took a snapshot."""

    epoch: int
    items: int = 0
    plan_s: float = 0.0
    run_s: float = 0.0
    checkpoint_s: float = 0.0
    await_commit_s: float = 0.0
    snapshot_s: float | None = None
    state_rows: int | None = None
    state_bytes: int | None = None
    commit_s: float = 0.0
    spark_jobs: int | None = None
    spark_stages: int | None = None
    spark_s: float | None = None
    driver_s: float | None = None
