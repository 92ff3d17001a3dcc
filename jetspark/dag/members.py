"""``config.members`` left unset: the executors of the worker that claims the job (SPEC §3).

The API plans such a job with one member (it sees no cluster); the claiming worker plans it
again for the executors its Spark application has, and stores that plan with the claim. Only
the parallelism changes: the all-to-one partitions drawn at submission are kept, and routing
stays exact because every target is computed from the stored plan (SPEC §4).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from jetspark.dag.errors import DagValidationError
from jetspark.dag.model import JobSpec
from jetspark.dag.plan import ExecutionPlan, build_plan, planned_dag, with_spec
from jetspark.dag.validate import validate_job
from jetspark.settings import DagLimits


def fitting_members(executors: int, widest_local_parallelism: int, max_parallelism: int) -> int:
    """``executors``, fewer when members x local parallelism would pass the DAG limit."""
    return max(1, min(executors, max_parallelism // max(1, widest_local_parallelism)))


def plan_for_executors(
    definition: dict[str, Any],
    stored_plan: dict[str, Any] | None,
    executors: int,
    limits: DagLimits | None = None,
) -> dict[str, Any] | None:
    """The job's plan for ``executors`` members, or None to keep the stored plan (members set
    by the user, already planned for this many, or a definition the runner will refuse).

    The DAG is the one the API validated, read back from the stored plan: it is not validated
    again with this worker's limits (a plan stored before its vertices' params were is)."""
    limits = limits or DagLimits()
    try:
        spec = JobSpec.model_validate(definition)
        if spec.config.members is not None or not stored_plan:
            return None
        stored = ExecutionPlan.model_validate(stored_plan)
        dag = planned_dag(with_spec(stored, spec)) or validate_job(spec, limits)
        local = dag.local_parallelism
        members = fitting_members(executors, max(local.values()), limits.max_parallelism)
        if members == stored.members:
            return None
        parallelism = {name: members * lp for name, lp in local.items()}
        # The submitted spec's name, config and fingerprint, not those of the DAG read back.
        plan = with_spec(build_plan(replace(dag, members=members, parallelism=parallelism)), spec)
    except (ValueError, DagValidationError):  # pydantic's ValidationError is a ValueError
        return None
    for edge, kept in zip(plan.edges, stored.edges, strict=True):
        edge.all_to_one_pid = kept.all_to_one_pid
    return plan.model_dump(mode="json")
