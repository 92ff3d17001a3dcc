"""/v1/dags:validate — the checks and the plan of a submission, without submitting."""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import (
    JdbcConnectionsDep,
    KafkaClustersDep,
    KeysDep,
    LimitsDep,
    PrincipalDep,
    SessionDep,
    WebhookSettingsDep,
    WebhookTargetsDep,
)
from api.problems import PROBLEM_RESPONSES
from api.schemas import Diagnostic, ValidationReport
from jetspark.dag.model import JobSpec
from jetspark.jobs.accept import AcceptRules, accept
from jetspark.jobs.snapshots import check_initial_snapshot

router = APIRouter(prefix="/v1", tags=["dags"], responses=PROBLEM_RESPONSES)


@router.post("/dags:validate", operation_id="dags-validate", response_model=ValidationReport)
def validate_dag(
    spec: JobSpec,
    session: SessionDep,
    limits: LimitsDep,
    keys: KeysDep,
    principal: PrincipalDep,
    connections: JdbcConnectionsDep,
    clusters: KafkaClustersDep,
    webhooks: WebhookSettingsDep,
    targets: WebhookTargetsDep,
) -> ValidationReport:
    """Check a job body as ``POST /v1/jobs`` does (``jetspark.jobs.accept``: the same checks
    in the same order); 200 with the plan, or the same 422 (or 409 for a snapshot it cannot
    start from)."""
    rules = AcceptRules(
        limits=limits,
        namespace=keys.namespace,
        principal=principal.name,
        connections=connections,
        clusters=clusters,
        webhooks=webhooks,
        targets=targets,
        snapshots=lambda name, dag: check_initial_snapshot(session, principal.name, name, dag),
    )
    plan = accept(spec, rules).plan
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
