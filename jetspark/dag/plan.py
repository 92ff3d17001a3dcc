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

import random
from dataclasses import replace
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, SerializeAsAny, field_serializer, model_validator

from jetspark.dag.kinds import PROCESSORS, AggregateParams, Params, Resources, Role
from jetspark.dag.model import (
    DagSpec,
    EdgeConfig,
    EdgeSpec,
    JobConfig,
    JobSpec,
    Routing,
    VertexSpec,
)
from jetspark.dag.snapshots import dag_fingerprint
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
    """Everything the engine runs a job from (``planned_dag`` reads the DAG back from it)."""

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


def _is_fusable(dag: ValidatedDag, edge: EdgeSpec) -> bool:
    return (
        edge.routing is Routing.unicast
        and not edge.distributed
        and dag.local_parallelism[edge.source] == dag.local_parallelism[edge.to]
        and len(dag.outbound[edge.source]) == 1
        and len(dag.inbound[edge.to]) == 1
    )


def _is_pregrouped(dag: ValidatedDag, edge: EdgeSpec) -> bool:
    """Whether ``edge`` takes an accumulate's rows, one per key in all, to the combine of the
    same aggregations by that key.

    An accumulate's group is (processor, key). With one member, an inbound edge partitioned
    on the aggregation key (or all-to-one, or a single processor) sends every item of a key
    to one processor, so there is one row per key; an edge partitioned on ``key`` then takes
    each key's only row to one combine processor, where merging one partial result is
    finishing it. The accumulate's only outbound edge: nothing else reads its rows.
    """
    sender, receiver = dag.params[edge.source], dag.params[edge.to]
    if not (isinstance(sender, AggregateParams) and isinstance(receiver, AggregateParams)):
        return False
    if (sender.stage, receiver.stage) != ("accumulate", "combine") or sender.key is None:
        return False
    if receiver.key != "key" or receiver.aggregations != sender.aggregations:
        return False
    if edge.routing is not Routing.partitioned or edge.key != "key":
        return False
    if dag.parallelism[edge.source] > dag.local_parallelism[edge.source]:
        return False  # several members: the general path (a local edge keeps rows by member)
    if len(dag.outbound[edge.source]) != 1 or len(dag.inbound[edge.source]) != 1:
        return False
    (inbound,) = dag.inbound[edge.source]
    return (
        dag.parallelism[edge.source] == 1
        or inbound.routing is Routing.all_to_one
        or (inbound.routing is Routing.partitioned and inbound.key == sender.key)
    )


def _exchange(dag: ValidatedDag, edge: EdgeSpec) -> Exchange:
    if edge.routing is Routing.broadcast:
        return Exchange.broadcast
    return Exchange.fused if _is_fusable(dag, edge) else Exchange.shuffle


def build_plan(dag: ValidatedDag, *, all_to_one_seed: int | None = None) -> ExecutionPlan:
    """Decide stages and exchanges; draw the all-to-one partition of each such edge."""
    partition_count = dag.spec.config.partition_count
    draw = random.Random(all_to_one_seed)
    stage_of: dict[str, int] = {}
    edges: list[EdgePlan] = []
    for edge in dag.spec.dag.edges:
        exchange = _exchange(dag, edge)
        edges.append(
            EdgePlan(
                source=edge.source,
                to=edge.to,
                from_ordinal=edge.from_ordinal,
                to_ordinal=edge.to_ordinal,
                routing=edge.routing,
                exchange=exchange,
                distributed=edge.distributed,
                priority=edge.priority,
                buffered=edge.buffered,
                key=edge.key,
                partitioner=edge.partitioner,
                all_to_one_pid=(
                    draw.randrange(partition_count) if edge.routing is Routing.all_to_one else None
                ),
                config=edge.config,
                pregrouped=_is_pregrouped(dag, edge),
            )
        )
    fused_into = {e.to: e.source for e in edges if e.exchange is Exchange.fused}
    stages: list[StagePlan] = []
    for name in dag.order:
        upstream = fused_into.get(name)
        if upstream is not None:
            stage_of[name] = stage_of[upstream]
            stages[stage_of[name]].vertices.append(name)
        else:
            stage_of[name] = len(stages)
            stages.append(StagePlan(id=len(stages), vertices=[name]))
    return ExecutionPlan(
        members=dag.members,
        partition_count=partition_count,
        order=list(dag.order),
        stages=stages,
        vertices=[
            VertexPlan(
                name=name,
                processor=dag.vertices[name].processor,
                stage=stage_of[name],
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
        ],
        edges=edges,
        name=dag.spec.name,
        config=dag.spec.config,
        fingerprint=dag_fingerprint(dag.spec),
        runs_in_epochs=dag.runs_in_epochs,
    )


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


def planned_spec(plan: ExecutionPlan) -> JobSpec:
    """The job as the API accepted it, read back from its plan: vertices with their
    validated params, edges as planned, the job's config (what a snapshot's shape is
    computed from, ``snapshots.state_shape``)."""
    vertices = [
        VertexSpec(
            name=v.name,
            processor=v.processor,
            params=v.params.model_dump(mode="json", by_alias=True),
            local_parallelism=v.local_parallelism,
        )
        for v in plan.vertices
    ]
    edges = [
        EdgeSpec.model_validate(
            {
                "from": e.source,
                "from_ordinal": e.from_ordinal,
                "to": e.to,
                "to_ordinal": e.to_ordinal,
                "routing": e.routing,
                "key": e.key,
                "partitioner": e.partitioner,
                "distributed": e.distributed,
                "priority": e.priority,
                "buffered": e.buffered,
                "config": e.config,
            }
        )
        for e in plan.edges
    ]
    return JobSpec(name=plan.name, dag=DagSpec(vertices=vertices, edges=edges), config=plan.config)


def _planned_dag(plan: ExecutionPlan) -> ValidatedDag:
    """The validated DAG a plan was built from (to plan it again for other members)."""
    spec = planned_spec(plan)
    inbound: dict[str, list[EdgeSpec]] = {n: [] for n in plan.order}
    outbound: dict[str, list[EdgeSpec]] = {n: [] for n in plan.order}
    for edge in spec.dag.edges:
        inbound[edge.to].append(edge)
        outbound[edge.source].append(edge)
    return ValidatedDag(
        spec=spec,
        order=tuple(plan.order),
        vertices={v.name: v for v in spec.dag.vertices},
        params={v.name: v.params for v in plan.vertices},
        inbound={n: tuple(sorted(es, key=lambda e: e.to_ordinal)) for n, es in inbound.items()},
        outbound={n: tuple(sorted(es, key=lambda e: e.from_ordinal)) for n, es in outbound.items()},
        members=plan.members,
        local_parallelism={v.name: v.local_parallelism for v in plan.vertices},
        parallelism={v.name: v.parallelism for v in plan.vertices},
    )


def rescale(plan: ExecutionPlan, members: int) -> ExecutionPlan:
    """The same plan for ``members`` members: parallelism (and what depends on it) planned
    again; the all-to-one partitions drawn at submission, the name, config and fingerprint
    kept."""
    dag = _planned_dag(plan)
    local = dag.local_parallelism
    parallelism = {name: members * lp for name, lp in local.items()}
    again = build_plan(replace(dag, members=members, parallelism=parallelism))
    for edge, kept in zip(again.edges, plan.edges, strict=True):
        edge.all_to_one_pid = kept.all_to_one_pid
    return again.model_copy(update={"fingerprint": plan.fingerprint})


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
