"""``DAG``, ``Vertex`` and ``Edge`` in the shape of Jet's Core API, with Python names.

The builders hold the server's own pydantic models (``jetspark.dag.model``): a vertex is a
``VertexSpec``, an edge an ``EdgeSpec``, the whole a ``JobSpec``. Nothing is validated twice
or differently: ``DAG.validate()`` runs the checks ``POST /v1/jobs`` runs, offline.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from jetspark.dag.errors import DagProblem, DagValidationError
from jetspark.dag.kinds import PROCESSORS
from jetspark.dag.model import EdgeConfig, EdgeSpec, JobConfig, JobSpec, Routing, VertexSpec
from jetspark.dag.validate import ValidatedDag
from jetspark.settings import DagLimits, RedisSettings

if TYPE_CHECKING:
    from jetspark.jobs.accept import Accepted


class Vertex:
    """A named processor and its params (Jet's ``Vertex``); made by ``DAG.new_vertex``."""

    def __init__(
        self,
        name: str,
        processor: str,
        params: Mapping[str, Any] | BaseModel | None = None,
        *,
        local_parallelism: int | None = None,
    ) -> None:
        self.spec = VertexSpec(
            name=name,
            processor=processor,
            params=_params_json(processor, params),
            local_parallelism=local_parallelism,
        )

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def processor(self) -> str:
        return self.spec.processor

    @property
    def params(self) -> dict[str, Any]:
        return self.spec.params

    def local_parallelism(self, count: int) -> Vertex:
        """Processors of this vertex on each member (Jet's ``localParallelism``)."""
        self.spec = self.spec.model_copy(update={"local_parallelism": count})
        return self

    def __repr__(self) -> str:
        return f"Vertex({self.name!r}, {self.processor!r})"


def _params_json(processor: str, params: Mapping[str, Any] | BaseModel | None) -> dict[str, Any]:
    """Params as the request carries them. A params model (``jetspark.dag.kinds``) must
    be the one of ``processor``: the typed way to write a vertex."""
    if params is None:
        return {}
    if isinstance(params, BaseModel):
        kind = PROCESSORS.get(processor)
        if kind is None or not isinstance(params, kind.params_model):
            wanted = kind.params_model.__name__ if kind else "none (unknown processor)"
            raise TypeError(
                f"{type(params).__name__} are not the params of {processor!r} (they are {wanted})"
            )
        dumped: dict[str, Any] = params.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return dumped
    return dict(params)


VertexRef = Vertex | str


def _name(vertex: VertexRef) -> str:
    return vertex if isinstance(vertex, str) else vertex.name


class Edge:
    """A link between two vertices (Jet's ``Edge``): ``Edge.between(a, b)`` or
    ``Edge.from_(a, 1).to(b, 0)``, then routing and priority by chained calls."""

    def __init__(self, source: VertexRef, from_ordinal: int = 0) -> None:
        self._fields: dict[str, Any] = {"from": _name(source), "from_ordinal": from_ordinal}

    @classmethod
    def between(cls, source: VertexRef, destination: VertexRef) -> Edge:
        """From ordinal 0 of ``source`` to ordinal 0 of ``destination``."""
        return cls(source).to(destination)

    @classmethod
    def from_(cls, source: VertexRef, ordinal: int = 0) -> Edge:
        """Jet's ``Edge.from(source, ordinal)``; name the destination with ``to``."""
        return cls(source, ordinal)

    def to(self, destination: VertexRef, ordinal: int = 0) -> Edge:
        self._fields.update(to=_name(destination), to_ordinal=ordinal)
        return self

    def _set(self, **fields: Any) -> Edge:
        self._fields.update(fields)
        return self

    def partitioned(self, key: str, partitioner: str | None = None) -> Edge:
        """Items of equal ``key`` (an expression) go to the same processor; ``partitioner``
        is ``murmur3`` (default), ``spark_hash`` or ``python:module:function``."""
        more = {"partitioner": partitioner} if partitioner is not None else {}
        return self._set(routing=Routing.partitioned.value, key=key, **more)

    def all_to_one(self) -> Edge:
        return self._set(routing=Routing.all_to_one.value)

    def broadcast(self) -> Edge:
        return self._set(routing=Routing.broadcast.value)

    def unicast(self) -> Edge:
        return self._set(routing=Routing.unicast.value)

    def distributed(self) -> Edge:
        """Items may go to processors on every member, not only the sender's."""
        return self._set(distributed=True)

    def local(self) -> Edge:
        return self._set(distributed=False)

    def priority(self, priority: int) -> Edge:
        """Edges of a lower number are consumed in full first (a hash join's build side)."""
        return self._set(priority=priority)

    def buffered(self) -> Edge:
        """Break a fork-and-rejoin deadlock by buffering this lower-priority edge."""
        return self._set(buffered=True)

    def set_config(self, config: EdgeConfig | None = None, **fields: Any) -> Edge:
        """Jet's ``EdgeConfig``: ``outbox_capacity`` (from a python vertex, source.sequence
        or source.redis_stream), ``queue_size`` (into a python vertex); the server refuses
        other values where nothing batches, and any but the default ``packet_size_limit`` /
        ``receive_window_multiplier`` (SPEC §3)."""
        given = config.model_dump() if config is not None else {}
        return self._set(config={**given, **fields})

    @property
    def spec(self) -> EdgeSpec:
        """The edge as the server reads it (raises pydantic's ``ValidationError``)."""
        return EdgeSpec.model_validate(self._fields)

    def __repr__(self) -> str:
        return f"Edge({self._fields.get('from')!r} -> {self._fields.get('to')!r})"


class DAG:
    """A job's DAG and config; ``to_json()`` is the body of ``POST /v1/jobs``."""

    def __init__(self, name: str, config: JobConfig | Mapping[str, Any] | None = None) -> None:
        self.name = name
        self.vertices: list[Vertex] = []
        self.edges: list[Edge] = []
        self.config = JobConfig.model_validate(config or {})

    def new_vertex(
        self,
        name: str,
        processor: str,
        params: BaseModel | None = None,
        /,
        **kw_params: Any,
    ) -> Vertex:
        """Add a vertex (Jet's ``dag.newVertex``): params as keywords (``**{"as": "word"}``
        for Python keywords), or one params model of ``jetspark.dag.kinds`` (typed).
        ``.local_parallelism(n)`` on the vertex sets its processors per member."""
        if params is not None and kw_params:
            raise TypeError("give params either as a model or as keywords, not both")
        return self.vertex(Vertex(name, processor, params if params is not None else kw_params))

    def vertex(self, vertex: Vertex) -> Vertex:
        self.vertices.append(vertex)
        return vertex

    def edge(self, edge: Edge) -> DAG:
        self.edges.append(edge)
        return self

    def get_vertex(self, name: str) -> Vertex:
        for vertex in self.vertices:
            if vertex.name == name:
                return vertex
        raise KeyError(name)

    def configure(self, **fields: Any) -> DAG:
        """Change job config fields (``processing_guarantee``, ``members``...)."""
        self.config = JobConfig.model_validate(
            {**self.config.model_dump(exclude_unset=True), **fields}
        )
        return self

    @property
    def spec(self) -> JobSpec:
        """The job as the server reads it; a malformed part raises ``DagValidationError``
        with the pointer the API would give."""
        body = {
            "name": self.name,
            "dag": {
                "vertices": [v.spec.model_dump(by_alias=True) for v in self.vertices],
                "edges": [edge._fields for edge in self.edges],
            },
            "config": self.config.model_dump(exclude_unset=True),
        }
        try:
            return JobSpec.model_validate(body)
        except ValidationError as error:
            raise DagValidationError(
                [
                    DagProblem("/" + "/".join(str(p) for p in e["loc"]), str(e["msg"]))
                    for e in error.errors()
                ]
            ) from None

    def validate(
        self, limits: DagLimits | None = None, *, namespace: str | None = None
    ) -> ValidatedDag:
        """The server's checks, offline, in the server's order (``jetspark.jobs.accept``):
        raises ``DagValidationError`` (or ``NotifyRefused``) whose ``problems`` carry the
        pointer and message ``POST /v1/jobs`` would answer with. Only a named
        ``initial_snapshot`` is left to the server, which keeps the snapshots."""
        return accept_offline(self, limits, namespace=namespace).dag

    def to_json(self) -> dict[str, Any]:
        """The body of ``POST /v1/jobs``; fields left at their defaults are left out."""
        dumped: dict[str, Any] = self.spec.model_dump(
            mode="json", by_alias=True, exclude_defaults=True
        )
        dumped.setdefault("dag", {}).setdefault("edges", [])
        return dumped

    def to_json_text(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_json(), indent=indent) + "\n"

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> DAG:
        """A DAG from a ``POST /v1/jobs`` body (checked by the server's model)."""
        spec = JobSpec.model_validate(body)
        dag = cls(spec.name, spec.config.model_dump(exclude_defaults=True))
        for v in spec.dag.vertices:
            dag.vertex(Vertex(v.name, v.processor, v.params, local_parallelism=v.local_parallelism))
        for e in spec.dag.edges:
            edge = Edge(e.source)
            edge._fields = e.model_dump(by_alias=True, exclude_defaults=True)
            edge._fields.setdefault("from", e.source)
            dag.edge(edge)
        return dag

    def __repr__(self) -> str:
        return f"DAG({self.name!r}, {len(self.vertices)} vertices, {len(self.edges)} edges)"


def accept_offline(
    dag: DAG, limits: DagLimits | None = None, *, namespace: str | None = None
) -> Accepted:
    """``DAG.validate``'s checks and the plan they build (``run_local`` runs that plan, so it
    is not built twice); not exported from ``jetspark.sdk``."""
    # Imported when called: building a DAG needs none of the accept path's modules (its
    # webhook, JDBC and Kafka rules).
    from jetspark.jobs.accept import AcceptRules, accept

    rules = AcceptRules(
        limits=limits or DagLimits(),
        namespace=namespace if namespace is not None else RedisSettings().namespace,
    )
    return accept(dag.spec, rules)
