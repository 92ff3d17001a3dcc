"""The execution plan: how a validated DAG maps onto Spark stages and exchanges.

Like Flink's job graph, it is a value of its own, kept apart from the submitted spec and from
the Spark operations. A local unicast edge between vertices of equal parallelism whose ends
have no other edges is *fused*: processor g hands items to processor g inside one Spark stage
(operator chaining). Every other edge is an exchange: a shuffle to exact target partitions, or
a broadcast. The all-to-one partition is drawn once here and recorded. An edge from an
accumulate stage whose rows are already one per key to its combine is marked ``pregrouped``:
the combine has nothing to merge (``_is_pregrouped``).

The plan is the one value the engine runs (``worker.engine.runner.run_job``): built once at
submission, stored with the job (``PLAN_VERSION``; plans of earlier versions are upgraded by
migration 0013, ``plan_upgrade``), read by the worker without validating or planning again.
Each vertex carries its typed params (the kind's params model, ``processors.PROCESSORS``),
its role, whether it is bounded, endless or needs event time, and what it touches.
"""

from __future__ import annotations

import hashlib
import json
import random
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, SerializeAsAny, field_serializer, model_validator

from jetspark.dag.kinds import PROCESSORS, AggregateParams, Params, Resources, Role
from jetspark.dag.model import EdgeConfig, JobConfig, JobSpec, Routing
from jetspark.dag.validate import ValidatedDag


class Exchange(StrEnum):
    fused = "fused"
    shuffle = "shuffle"
    broadcast = "broadcast"


PLAN_VERSION = 2
"""The stored plan's shape; migration 0013 upgraded every plan stored before to it."""


class Touches(BaseModel):
    """What a vertex reaches outside the job, as its params name it (``Resources``)."""

    paths: list[str] = Field(default_factory=list)
    redis_names: list[str] = Field(default_factory=list)
    connections: list[str] = Field(default_factory=list)


class VertexPlan(BaseModel):
    name: str
    processor: str
    stage: int
    parallelism: int
    local_parallelism: int
    role: Role
    params: SerializeAsAny[Params]
    """The kind's params model, as validation accepted them (stored as JSON, by alias)."""
    bounded: bool = True
    """As a source: its input is finite (else the job runs in epochs until stopped)."""
    endless: bool = False
    """As a source: it is never read to its end."""
    needs_event_time: bool = False
    touches: Touches = Field(default_factory=Touches)

    @model_validator(mode="before")
    @classmethod
    def _typed_params(cls, data: Any) -> Any:
        """Stored JSON params become the kind's params model (a union keyed by ``processor``)."""
        if isinstance(data, dict) and isinstance(data.get("params"), dict):
            kind = PROCESSORS.get(str(data.get("processor")))
            if kind is None:
                raise ValueError(f"unknown processor {data.get('processor')!r}")
            data = {**data, "params": kind.params_model.model_validate(data["params"])}
        return data

    @field_serializer("params")
    def _params_json(self, params: Params) -> dict[str, Any]:
        dumped: dict[str, Any] = params.model_dump(mode="json", by_alias=True)
        return dumped


class EdgePlan(BaseModel):
    source: str
    to: str
    from_ordinal: int
    to_ordinal: int
    routing: Routing
    exchange: Exchange
    distributed: bool
    priority: int
    buffered: bool
    key: str | None
    partitioner: str
    all_to_one_pid: int | None = None
    config: EdgeConfig = EdgeConfig()
    pregrouped: bool = False
    """An accumulate's edge to its combine that carries one row per key in all (one member,
    keyed alike end to end): the combine finishes each row instead of merging (False in
    plans stored before, which take the general path)."""


class StagePlan(BaseModel):
    id: int
    vertices: list[str]


class ExecutionPlan(BaseModel):
    """Everything the engine runs a job from, and a snapshot's shape is computed from
    (``snapshots.state_shape``)."""

    members: int
    partition_count: int
    order: list[str]
    stages: list[StagePlan]
    vertices: list[VertexPlan]
    edges: list[EdgePlan]
    name: str
    """The job's name."""
    config: JobConfig
    """The job's config as the API accepted it."""
    fingerprint: str
    """``dag_fingerprint`` of the submitted DAG: what a snapshot records it was taken of."""
    runs_in_epochs: bool = False
    """A stream (``ValidatedDag.runs_in_epochs``): run epoch by epoch, else once."""
    version: int = PLAN_VERSION

    @property
    def sources(self) -> list[str]:
        """Vertices without inbound edges, in topological order."""
        return [n for n in self.order if not self.inbound(n)]

    @property
    def sinks(self) -> list[str]:
        return [v.name for v in self.vertices if v.role == "sink"]

    def vertex(self, name: str) -> VertexPlan:
        return next(v for v in self.vertices if v.name == name)

    def inbound(self, name: str) -> list[EdgePlan]:
        return sorted((e for e in self.edges if e.to == name), key=lambda e: e.to_ordinal)

    def outbound(self, name: str) -> list[EdgePlan]:
        """A vertex's outbound edges, index = from_ordinal."""
        return sorted((e for e in self.edges if e.source == name), key=lambda e: e.from_ordinal)


def _is_fusable(plan: ExecutionPlan, edge: EdgePlan) -> bool:
    return (
        edge.routing is Routing.unicast
        and not edge.distributed
        and plan.vertex(edge.source).local_parallelism == plan.vertex(edge.to).local_parallelism
        and len(plan.outbound(edge.source)) == 1
        and len(plan.inbound(edge.to)) == 1
    )


def _is_pregrouped(plan: ExecutionPlan, edge: EdgePlan) -> bool:
    """Whether ``edge`` takes an accumulate's rows, one per key in all, to the combine of the
    same aggregations by that key.

    An accumulate's group is (processor, key). With one member, an inbound edge partitioned
    on the aggregation key (or all-to-one, or a single processor) sends every item of a key
    to one processor, so there is one row per key; an edge partitioned on ``key`` then takes
    each key's only row to one combine processor, where merging one partial result is
    finishing it. The accumulate's only outbound edge: nothing else reads its rows.
    """
    source = plan.vertex(edge.source)
    sender, receiver = source.params, plan.vertex(edge.to).params
    if not (isinstance(sender, AggregateParams) and isinstance(receiver, AggregateParams)):
        return False
    if (sender.stage, receiver.stage) != ("accumulate", "combine") or sender.key is None:
        return False
    if receiver.key != "key" or receiver.aggregations != sender.aggregations:
        return False
    if edge.routing is not Routing.partitioned or edge.key != "key":
        return False
    if source.parallelism > source.local_parallelism:
        return False  # several members: the general path (a local edge keeps rows by member)
    if len(plan.outbound(edge.source)) != 1 or len(plan.inbound(edge.source)) != 1:
        return False
    (inbound,) = plan.inbound(edge.source)
    return (
        source.parallelism == 1
        or inbound.routing is Routing.all_to_one
        or (inbound.routing is Routing.partitioned and inbound.key == sender.key)
    )


def _exchange(plan: ExecutionPlan, edge: EdgePlan) -> Exchange:
    if edge.routing is Routing.broadcast:
        return Exchange.broadcast
    return Exchange.fused if _is_fusable(plan, edge) else Exchange.shuffle


def _stages(order: list[str], edges: list[EdgePlan]) -> tuple[list[StagePlan], dict[str, int]]:
    """One stage per vertex, a fused edge's target in its source's; each vertex's stage."""
    fused_into = {e.to: e.source for e in edges if e.exchange is Exchange.fused}
    stage_of: dict[str, int] = {}
    stages: list[StagePlan] = []
    for name in order:
        upstream = fused_into.get(name)
        if upstream is not None:
            stage_of[name] = stage_of[upstream]
            stages[stage_of[name]].vertices.append(name)
        else:
            stage_of[name] = len(stages)
            stages.append(StagePlan(id=len(stages), vertices=[name]))
    return stages, stage_of


def _laid_out(plan: ExecutionPlan, members: int) -> ExecutionPlan:
    """``plan`` for ``members`` members: every decision that depends on them (parallelism,
    exchanges, pregrouped edges, stages) made from the plan's own vertices and edges. What
    does not (params, the drawn all-to-one partitions, the fingerprint) is kept."""
    sized = [
        v.model_copy(update={"parallelism": members * v.local_parallelism}) for v in plan.vertices
    ]
    resized = plan.model_copy(update={"vertices": sized})
    edges = [
        e.model_copy(
            update={"exchange": _exchange(resized, e), "pregrouped": _is_pregrouped(resized, e)}
        )
        for e in plan.edges
    ]
    stages, stage_of = _stages(plan.order, edges)
    vertices = [v.model_copy(update={"stage": stage_of[v.name]}) for v in sized]
    return plan.model_copy(
        update={"members": members, "vertices": vertices, "edges": edges, "stages": stages}
    )


def build_plan(dag: ValidatedDag, *, all_to_one_seed: int | None = None) -> ExecutionPlan:
    """Describe each vertex and edge, draw the all-to-one partition of each such edge, then
    decide stages and exchanges for the DAG's members (``_laid_out``, as ``rescale`` does)."""
    partition_count = dag.spec.config.partition_count
    draw = random.Random(all_to_one_seed)
    edges = [
        EdgePlan(
            source=edge.source,
            to=edge.to,
            from_ordinal=edge.from_ordinal,
            to_ordinal=edge.to_ordinal,
            routing=edge.routing,
            exchange=Exchange.shuffle,  # decided by _laid_out
            distributed=edge.distributed,
            priority=edge.priority,
            buffered=edge.buffered,
            key=edge.key,
            partitioner=edge.partitioner,
            all_to_one_pid=(
                draw.randrange(partition_count) if edge.routing is Routing.all_to_one else None
            ),
            config=edge.config,
        )
        for edge in dag.spec.dag.edges
    ]
    vertices = [
        VertexPlan(
            name=name,
            processor=dag.vertices[name].processor,
            stage=0,  # decided by _laid_out
            parallelism=dag.parallelism[name],
            local_parallelism=dag.local_parallelism[name],
            role=dag.kind(name).role,
            params=dag.params[name],
            bounded=dag.kind(name).is_bounded(dag.params[name]),
            endless=dag.kind(name).is_endless(dag.params[name]),
            needs_event_time=dag.kind(name).needs_event_time,
            touches=touches(dag.kind(name).resources, dag.params[name]),
        )
        for name in dag.order
    ]
    described = ExecutionPlan(
        members=dag.members,
        partition_count=partition_count,
        order=list(dag.order),
        stages=[],
        vertices=vertices,
        edges=edges,
        name=dag.spec.name,
        config=dag.spec.config,
        fingerprint=dag_fingerprint(dag.spec),
        runs_in_epochs=dag.runs_in_epochs,
    )
    return _laid_out(described, dag.members)


def dag_fingerprint(spec: JobSpec) -> str:
    """The DAG's identity: the same vertices, edges and params give the same fingerprint."""
    canonical = json.dumps(spec.dag.model_dump(mode="json", by_alias=True), sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def touches(resources: Resources, params: BaseModel) -> Touches:
    """The values of a vertex's resource params (a param may hold one name or a list)."""

    def values(fields: tuple[str, ...]) -> list[str]:
        found: list[str] = []
        for field in fields:
            value = getattr(params, field, None)
            found += [str(v) for v in value] if isinstance(value, list) else [str(value)]
        return [v for v in found if v != "None"]

    return Touches(
        paths=values(resources.paths),
        redis_names=values(resources.redis_names),
        connections=values(resources.connections),
    )


def rescale(plan: ExecutionPlan, members: int) -> ExecutionPlan:
    """The same plan for ``members`` members: each vertex's parallelism is members x its
    local parallelism, and what depends on it is decided again as ``build_plan`` decides
    it; the all-to-one partitions drawn at submission, the name, config and fingerprint are
    kept."""
    return _laid_out(plan, members)


def upstream_of(edge: EdgePlan, sender: VertexPlan, receiver: VertexPlan, processor: int) -> range:
    """The sender's processors that send to ``processor`` of the receiver over ``edge``.

    A fused edge hands processor g's items to processor g only, so its watermarks too.
    """
    if edge.exchange is Exchange.fused:
        return range(processor, processor + 1)
    if edge.distributed:
        return range(sender.parallelism)
    member = processor // receiver.local_parallelism
    first = member * sender.local_parallelism
    return range(first, min(first + sender.local_parallelism, sender.parallelism))
