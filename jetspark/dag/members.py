"""``config.members`` left unset: the executors of the worker that claims the job (SPEC §3).

The API plans such a job with one member (it sees no cluster); the claiming worker plans it
again for the executors its Spark application has, and stores that plan with the claim. Only
the parallelism changes: the all-to-one partitions drawn at submission are kept, and routing
stays exact because every target is computed from the stored plan (SPEC §4).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jetspark.dag.plan import ExecutionPlan, rescale
from jetspark.settings import DagLimits


def fitting_members(executors: int, widest_local_parallelism: int, max_parallelism: int) -> int:
    """``executors``, fewer when members x local parallelism would pass the DAG limit."""
    return max(1, min(executors, max_parallelism // max(1, widest_local_parallelism)))


def plan_for_executors(
    stored_plan: dict[str, Any] | None,
    executors: int | Callable[[], int],
    limits: DagLimits | None = None,
) -> dict[str, Any] | None:
    """The job's plan for ``executors`` members, or None to keep the stored plan (members set
    by the user, already planned for this many, or no plan the runner could read).
    ``executors`` may be a function, asked only for a plan that leaves members unset.

    The plan is planned again from itself (``plan.rescale``): the DAG the API validated is
    not validated again with this worker's limits."""
    try:
        stored = ExecutionPlan.model_validate(stored_plan) if stored_plan else None
    except ValueError:  # pydantic's ValidationError is a ValueError: the runner fails the job
        return None
    if stored is None or stored.config.members is not None:
        return None
    limits = limits or DagLimits()
    count = executors() if callable(executors) else executors
    widest = max(v.local_parallelism for v in stored.vertices)
    members = fitting_members(count, widest, limits.max_parallelism)
    if members == stored.members:
        return None
    return rescale(stored, members).model_dump(mode="json")
