"""The one accept path: every check a job body passes before it is queued, in one order.

``POST /v1/jobs``, ``POST /v1/dags:validate`` and the SDK's ``DAG.validate()`` all call
``accept``, so the same body gets the same verdict and the same problems from each:

1. text PostgreSQL can store (``UnstorableText``: no NUL, no lone surrogate);
2. the DAG against SPEC §3 and the registry of kinds (``validate_job``);
3. Redis names under the server's own prefix (``tenants.redis_names``), the JDBC
   connections and Kafka topics the principal may use (``jdbc.connections``,
   ``kafka.clusters``; only where the operator's are known, so not offline in the SDK);
4. the job's config against what kind of job it is (``job_config_problems``): a batch job
   is refused the settings only a stream honours;
5. ``config.notify`` against the webhook rules (``NotifyRefused``);
6. the plan, built once: every field an expression reads is one its input has, where the DAG
   tells the input's fields (``field_refs``), so Spark's analysis cannot refuse it later;
7. the plan against the snapshot ``config.initial_snapshot`` names (``SnapshotConflict``;
   only where the snapshots are, so not offline in the SDK): the shape of its state is
   computed from the plan, as the worker that recorded it did.

Problems of steps 2-4 are one ``DagValidationError``, those of step 6 another.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jetspark.dag.errors import DagProblem, DagValidationError
from jetspark.dag.field_refs import unknown_field_problems
from jetspark.dag.model import JobConfig, JobSpec
from jetspark.dag.plan import ExecutionPlan, build_plan
from jetspark.dag.validate import ValidatedDag, validate_job
from jetspark.jdbc.connections import JdbcConnections, connection_problems
from jetspark.kafka.clusters import KafkaClusters, topic_problems
from jetspark.settings import DagLimits, DataSettings, WebhookSettings
from jetspark.tenants.redis_names import user_name_problems
from jetspark.webhooks.subscriptions import webhooks_of
from jetspark.webhooks.targets import TargetPolicy

SnapshotCheck = Callable[[str, ExecutionPlan], None]
"""Checks a planned DAG can start from the named snapshot (raises ``SnapshotConflict``)."""


class UnstorableText(DagValidationError):
    """A string PostgreSQL cannot store (answered as an invalid request, not an invalid DAG)."""


@dataclass(frozen=True)
class AcceptRules:
    """What the checks are held to: the server's settings (or the SDK's, offline)."""

    limits: DagLimits = field(default_factory=DagLimits)
    namespace: str = "jetspark"
    """The Redis namespace whose prefix user names may not spell out."""
    webhooks: WebhookSettings = field(default_factory=WebhookSettings)
    targets: TargetPolicy | None = None
    principal: str = "local"
    """Whose job it is: the JDBC connections are held to what it may use."""
    connections: JdbcConnections | None = None
    """The operator's JDBC connections; None: not checked (offline: the SDK has none)."""
    clusters: KafkaClusters | None = None
    """The operator's Kafka clusters; None: not checked (offline)."""
    snapshots: SnapshotCheck | None = None
    """None: the named snapshot is not checked (offline: the SDK has no snapshots)."""
    data: DataSettings | None = None
    """The data roots paths are held to; None: the operator's (``JETSPARK_DATA_ROOTS``)."""


@dataclass(frozen=True)
class Accepted:
    dag: ValidatedDag
    plan: ExecutionPlan
    webhooks: list[dict[str, str]]
    """The job's webhooks as ``jobs.webhooks`` keeps them."""


def accept(spec: JobSpec, rules: AcceptRules, *, all_to_one_seed: int | None = None) -> Accepted:
    """Every check, in the order above; raises at the first step with problems."""
    text = storable_problems(spec.as_json(), "")
    if text:
        raise UnstorableText(text)
    dag = validate_job(spec, rules.limits, data=rules.data)
    problems = user_name_problems(spec, rules.namespace)
    if rules.connections is not None:
        problems += connection_problems(spec, rules.principal, rules.connections)
    if rules.clusters is not None:
        problems += topic_problems(spec, rules.principal, rules.clusters)
    problems += job_config_problems(dag)
    if problems:
        raise DagValidationError(problems)
    targets = rules.targets or TargetPolicy(rules.webhooks)
    hooks = webhooks_of(spec.config.notify, rules.webhooks, targets)
    plan = build_plan(dag, all_to_one_seed=all_to_one_seed)
    unread = unknown_field_problems(spec, plan)
    if unread:
        raise DagValidationError(unread)
    if spec.config.initial_snapshot is not None and rules.snapshots is not None:
        rules.snapshots(spec.config.initial_snapshot, plan)
    return Accepted(dag, plan, hooks)


STREAM_ONLY = {
    "processing_guarantee": "a batch job runs once over bounded input, with no snapshots or "
    "replays for a guarantee to govern (a job reading an unbounded source, or needing event "
    "time, runs in epochs and takes one)",
    "snapshot_interval_ms": "a batch job takes no snapshots",
    "backup_count": "a batch job takes no snapshots to back up",
    "require_backups": "a batch job takes no snapshots to back up",
    "epoch_interval_ms": "a batch job runs once, not in epochs",
}
"""Job config a batch job has no use for: any value but the default is refused, naming it."""


def job_config_problems(dag: ValidatedDag) -> list[DagProblem]:
    """Config the job would ignore, given what kind of job it is."""
    if dag.runs_in_epochs:
        return []
    config, defaults = dag.spec.config, JobConfig()
    return [
        DagProblem(f"/config/{name}", f"{name}: {why}; leave it out")
        for name, why in STREAM_ONLY.items()
        if getattr(config, name) != getattr(defaults, name)
    ]


def storable_problems(value: Any, pointer: str) -> list[DagProblem]:
    """Every string (key or value) with a NUL or a lone surrogate: PostgreSQL text and JSONB
    refuse both, so the client learns where instead of a 500 from the INSERT."""
    if isinstance(value, str):
        if "\x00" in value:
            return [DagProblem(pointer or "/", "text cannot contain NUL (U+0000)")]
        try:
            value.encode()
        except UnicodeEncodeError:
            return [DagProblem(pointer or "/", "text must be valid Unicode")]
        return []
    if isinstance(value, dict):
        found: list[DagProblem] = []
        for key, item in value.items():
            escaped = str(key).replace("~", "~0").replace("/", "~1")
            here = f"{pointer}/{escaped}"
            found += storable_problems(key, here) + storable_problems(item, here)
        return found
    if isinstance(value, list):
        return [
            p for i, item in enumerate(value) for p in storable_problems(item, f"{pointer}/{i}")
        ]
    return []
