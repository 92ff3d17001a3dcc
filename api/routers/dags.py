"""/v1/dags:validate — the checks and the plan of a submission, without submitting."""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import LimitsDep, PrincipalDep
from api.problems import PROBLEM_RESPONSES
from api.schemas import Diagnostic, ValidationReport
from api.storable import require_storable
from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job

router = APIRouter(prefix="/v1", tags=["dags"], responses=PROBLEM_RESPONSES)


@router.post("/dags:validate", operation_id="dags-validate", response_model=ValidationReport)
def validate_dag(spec: JobSpec, limits: LimitsDep, _principal: PrincipalDep) -> ValidationReport:
    """Validate a job body as ``POST /v1/jobs`` would; 200 with the plan, or the same 422."""
    require_storable(spec)  # the same 422 as submission gives
    dag = validate_job(spec, limits)
    plan = build_plan(dag)
    diagnostics = [
        Diagnostic(level="info", message=f"{len(plan.stages)} Spark stage(s)"),
        *(
            Diagnostic(level="info", message=f"edge {e.source} -> {e.to}: {e.exchange.value}")
            for e in plan.edges
        ),
    ]
    diagnostics += [
        Diagnostic(
            level="warning",
            message=f"edge {e.source} -> {e.to}: all-to-one into a vertex of local parallelism "
            f"{plan.vertex(e.to).local_parallelism}; its other processors stay idle",
        )
        for e in plan.edges
        if e.all_to_one_pid is not None and plan.vertex(e.to).local_parallelism > 1
    ]
    return ValidationReport(valid=True, diagnostics=diagnostics, plan=plan.model_dump(mode="json"))
