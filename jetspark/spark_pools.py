"""The FAIR scheduler pools a worker's jobs run in.

A worker runs several jobs on one SparkContext. In one pool their stages would be served
first come, first served: a stream's epoch (a few small tasks) waited behind every task of
the batch jobs submitted before it, and a stream taken over from a lost worker ran its first
epoch several times slower than a steady one while the survivor ran word counts. So streams
have a pool of their own that Spark serves first whenever none of its tasks runs (``minShare``
1) and with twice the batch pool's weight otherwise; inside each pool, jobs share fairly."""

from __future__ import annotations

from pathlib import Path
from typing import Final

STREAMS: Final = "streams"
"""Epochs of streaming jobs, and the worker's warm-up (a small stream)."""
BATCH: Final = "batch"
"""Jobs over bounded input."""
ALLOCATION_FILE: Final = Path(__file__).with_name("scheduler_pools.xml")
"""``spark.scheduler.allocation.file`` of a worker's session, unless the operator sets one."""


def pool_for(runs_in_epochs: bool) -> str:
    """The pool of a job that streams (runs in epochs) or does not."""
    return STREAMS if runs_in_epochs else BATCH
