"""Plans stored by earlier versions, upgraded once to ``PLAN_VERSION`` (migration 0013).

Version 1 plans (no ``version``) may lack the job's name, config and fingerprint and each
vertex's role and params (plans stored before issue 13); none carries what a vertex is
(bounded, endless, event time, what it touches). All of it is taken from the job's
definition as the API accepted it and from the registry of kinds; the plan's own decisions
(stages, exchanges, drawn all-to-one partitions, members) are kept as they were. The engine
then reads every stored plan one way, with no branch for older ones.
"""

from __future__ import annotations

from typing import Any

from jetspark.dag.kinds import PROCESSORS
from jetspark.dag.model import JobSpec
from jetspark.dag.plan import PLAN_VERSION, ExecutionPlan, dag_fingerprint, touches


class NotUpgradable(ValueError):
    """A stored plan (or its definition) this version cannot read."""


def upgrade_plan(stored: dict[str, Any], definition: dict[str, Any]) -> dict[str, Any] | None:
    """The stored plan at ``PLAN_VERSION`` (JSON), or None when it is there already."""
    if int(stored.get("version", 1)) >= PLAN_VERSION:
        return None
    try:
        spec = JobSpec.model_validate(definition)
    except ValueError as error:
        raise NotUpgradable(f"the job's definition: {error}") from error
    given = {v.name: v for v in spec.dag.vertices}
    vertices: list[dict[str, Any]] = []
    for vertex in stored.get("vertices", []):
        name, processor = vertex.get("name"), vertex.get("processor")
        kind = PROCESSORS.get(str(processor))
        if kind is None or name not in given:
            raise NotUpgradable(f"vertex {name!r}: processor {processor!r} is not known")
        raw = vertex.get("params")
        try:
            params = kind.params_model.model_validate(
                raw if raw is not None else given[name].params
            )
        except ValueError as error:
            raise NotUpgradable(f"vertex {name!r}: {error}") from error
        vertices.append(
            {
                **vertex,
                "role": kind.role,
                "params": params.model_dump(mode="json", by_alias=True),
                "bounded": kind.is_bounded(params),
                "endless": kind.is_endless(params),
                "needs_event_time": kind.needs_event_time,
                "touches": touches(kind.resources, params).model_dump(mode="json"),
            }
        )
    bounded = all(v["bounded"] for v in vertices)
    events = any(v["needs_event_time"] for v in vertices)
    upgraded = {
        **stored,
        "vertices": vertices,
        "name": stored.get("name") or spec.name,
        "config": stored.get("config") or spec.config.model_dump(mode="json"),
        "fingerprint": stored.get("fingerprint") or dag_fingerprint(spec),
        "runs_in_epochs": not bounded or events or spec.config.initial_snapshot is not None,
        "version": PLAN_VERSION,
    }
    try:
        return ExecutionPlan.model_validate(upgraded).model_dump(mode="json")
    except ValueError as error:
        raise NotUpgradable(str(error)) from error
