"""Check a submitted job against every rule of SPEC §3 and return the validated DAG.

All problems are collected, each with a JSON pointer, so a user fixes them in one round.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from jetspark.dag.data_paths import PathRefused, check_path
from jetspark.dag.errors import DagProblem, DagValidationError
from jetspark.dag.expressions import ExpressionError, check_expression
from jetspark.dag.kinds import PROCESSORS, CheckContext, ProcessorKind, module_allowed
from jetspark.dag.model import EdgeConfig, EdgeSpec, JobSpec, Routing, VertexSpec
from jetspark.json_depth import value_depth
from jetspark.settings import DagLimits, DataSettings, EngineBounds, ExpressionLimits

DEFAULT_MEMBERS = 1
DEFAULT_LOCAL_PARALLELISM = 2
BUILT_IN_PARTITIONERS = frozenset({"murmur3", "spark_hash"})
DEFAULT_PARTITIONER = "murmur3"
UNKEYED = (Routing.unicast, Routing.broadcast, Routing.all_to_one)
"""Routings that take no key: each item goes to one candidate in turn, to all of them, or to
the one processor drawn when the job is planned (SPEC §4)."""
UNSUPPORTED_EDGE_CONFIG = {
    "packet_size_limit": "has no match in Spark: its shuffle's network buffers are sized per "
    "session (spark.reducer.maxSizeInFlight), not per edge; leave it at its default",
    "receive_window_multiplier": "has no match in Spark: a shuffle reader's flow control is "
    "per session (spark.reducer.maxReqsInFlight), not per edge; leave it at its default",
}
"""Jet edge settings Spark cannot honour per edge: any value but the default is refused."""


@dataclass(frozen=True)
class ValidatedDag:
    """A DAG that passed every check, with the facts planning needs."""

    spec: JobSpec
    order: tuple[str, ...]
    """Vertex names in topological order."""
    vertices: dict[str, VertexSpec]
    params: dict[str, BaseModel]
    inbound: dict[str, tuple[EdgeSpec, ...]]
    outbound: dict[str, tuple[EdgeSpec, ...]]
    members: int
    local_parallelism: dict[str, int]
    parallelism: dict[str, int]

    def kind(self, vertex: str) -> ProcessorKind:
        return PROCESSORS[self.vertices[vertex].processor]

    @property
    def runs_in_epochs(self) -> bool:
        """A stream: a source is unbounded, a kind needs event time, or the job starts from a
        snapshot. Otherwise a batch job, run once over bounded input."""
        if self.spec.config.initial_snapshot is not None:
            return True
        return any(
            self.kind(name).needs_event_time or not self.kind(name).is_bounded(self.params[name])
            for name in self.order
        )


class _Checker:
    def __init__(self, spec: JobSpec, limits: DagLimits, data: DataSettings | None) -> None:
        self.spec = spec
        self.limits = limits
        self.data = data
        self.problems: list[DagProblem] = []
        self.index = {v.name: i for i, v in enumerate(spec.dag.vertices)}
        self.max_size = ExpressionLimits().max_size
        self.bounds = EngineBounds()

    def problem(self, pointer: str, message: str) -> None:
        self.problems.append(DagProblem(pointer, message))

    def refusal(self) -> DagValidationError:
        """All problems, the first ``EngineBounds.problems`` of them listed."""
        most = self.bounds.problems
        if len(self.problems) <= most:
            return DagValidationError(self.problems)
        more = DagProblem("/dag", f"{len(self.problems) - most} more problems not listed")
        return DagValidationError([*self.problems[:most], more])

    def vertex_ptr(self, name: str, suffix: str = "") -> str:
        return f"/dag/vertices/{self.index[name]}{suffix}"

    # -- vertices -------------------------------------------------------------------------
    def check_vertices(self) -> dict[str, BaseModel]:
        dag, limits = self.spec.dag, self.limits
        if len(dag.vertices) > limits.max_vertices:
            self.problem(
                "/dag/vertices",
                f"{len(dag.vertices)} vertices; at most {limits.max_vertices} are allowed",
            )
        if len(dag.edges) > limits.max_edges:
            self.problem(
                "/dag/edges", f"{len(dag.edges)} edges; at most {limits.max_edges} are allowed"
            )
        if not dag.vertices:
            self.problem("/dag/vertices", "a DAG needs at least one vertex")
        seen: set[str] = set()
        params: dict[str, BaseModel] = {}
        for i, vertex in enumerate(dag.vertices):
            pointer = f"/dag/vertices/{i}"
            if vertex.name in seen:
                self.problem(f"{pointer}/name", f"duplicate vertex name {vertex.name!r}")
                continue
            seen.add(vertex.name)
            kind = PROCESSORS.get(vertex.processor)
            if kind is None:
                known = ", ".join(sorted(PROCESSORS))
                self.problem(
                    f"{pointer}/processor",
                    f"vertex {vertex.name!r}: unknown "
                    f"processor {vertex.processor!r} (known: {known})",
                )
                continue
            if value_depth(vertex.params) > self.bounds.json_depth:
                self.problem(
                    f"{pointer}/params",
                    f"vertex {vertex.name!r}: params nest deeper than {self.bounds.json_depth}",
                )
                continue
            parsed = self.parse_params(vertex, kind, pointer)
            if parsed is not None:
                params[vertex.name] = parsed
                self.check_expressions(vertex, kind, parsed, pointer)
                self.check_paths(vertex, kind, parsed, pointer)
                self.check_kind(vertex, kind, parsed, pointer)
        return params

    def parse_params(
        self, vertex: VertexSpec, kind: ProcessorKind, pointer: str
    ) -> BaseModel | None:
        try:
            return kind.params_model.model_validate(vertex.params)
        except ValidationError as error:
            for detail in error.errors():
                path = "/".join(str(part) for part in detail["loc"])
                self.problem(
                    f"{pointer}/params/{path}".rstrip("/"),
                    f"vertex {vertex.name!r} ({kind.name}): {detail['msg']}",
                )
            return None

    def check_expressions(
        self, vertex: VertexSpec, kind: ProcessorKind, params: BaseModel, pointer: str
    ) -> None:
        for field, allow in [(f, False) for f in kind.expression_fields] + [
            (f, True) for f in kind.aggregate_fields
        ]:
            value = getattr(params, field, None)
            for sub, expression in expressions_in(value):
                try:
                    check_expression(expression, allow_aggregates=allow, max_size=self.max_size)
                except ExpressionError as error:
                    self.problem(
                        f"{pointer}/params/{field}{sub}", f"vertex {vertex.name!r}: {error}"
                    )

    def check_kind(
        self, vertex: VertexSpec, kind: ProcessorKind, params: BaseModel, pointer: str
    ) -> None:
        """The kind's own checks (``ProcessorKind.checks``), each problem naming its param."""
        context = CheckContext(self.limits, self.bounds)
        for check in kind.checks:
            for field, message in check(params, context):
                at = f"{pointer}/params/{field}" if field else f"{pointer}/params"
                self.problem(at, f"vertex {vertex.name!r}: {message}")

    def check_config(self) -> None:
        config, b = self.spec.config, self.bounds
        for field, value, bound in (
            ("partition_count", config.partition_count, b.partition_count),
            ("timeout_s", config.timeout_s, b.timeout_s),
            ("members", config.members, self.limits.max_parallelism),
            ("local_parallelism", config.local_parallelism, self.limits.max_parallelism),
        ):
            if value is not None and value > bound:
                self.problem(f"/config/{field}", f"{field} {value:g} is over its bound {bound:g}")

    def check_paths(
        self, vertex: VertexSpec, kind: ProcessorKind, params: BaseModel, pointer: str
    ) -> None:
        for field in kind.resources.paths:
            try:
                check_path(str(getattr(params, field, "")), self.data)
            except PathRefused as error:
                self.problem(f"{pointer}/params/{field}", f"vertex {vertex.name!r}: {error}")

    # -- edges ----------------------------------------------------------------------------
    def check_edges(self) -> None:
        pairs: set[tuple[str, str]] = set()
        for i, edge in enumerate(self.spec.dag.edges):
            pointer = f"/dag/edges/{i}"
            for end, name in (("from", edge.source), ("to", edge.to)):
                if name not in self.index:
                    self.problem(f"{pointer}/{end}", f"edge {edge.label}: unknown vertex {name!r}")
            if (edge.source, edge.to) in pairs:
                self.problem(
                    pointer, f"edge {edge.label}: more than one edge between this pair of vertices"
                )
            pairs.add((edge.source, edge.to))
            if edge.routing is Routing.partitioned and not edge.key:
                self.problem(f"{pointer}/key", f"edge {edge.label}: a partitioned edge needs a key")
            if edge.routing in UNKEYED:
                self.check_unkeyed(edge, pointer)
                self.check_edge_config(edge, pointer)
                continue
            if edge.key:
                try:
                    check_expression(edge.key, max_size=self.max_size)
                except ExpressionError as error:
                    self.problem(f"{pointer}/key", f"edge {edge.label}: {error}")
            self.check_partitioner(edge, pointer)
            self.check_edge_config(edge, pointer)

    def check_unkeyed(self, edge: EdgeSpec, pointer: str) -> None:
        """A unicast, broadcast or all-to-one edge routes by no key: a key or partitioner
        given there would be ignored, so it is refused."""
        routing = edge.routing.value
        if edge.key is not None:
            self.problem(
                f"{pointer}/key",
                f"edge {edge.label}: a {routing} edge routes by no key: leave key out "
                "(a partitioned edge takes one)",
            )
        if edge.partitioner != DEFAULT_PARTITIONER:
            self.problem(
                f"{pointer}/partitioner",
                f"edge {edge.label}: a {routing} edge routes by no key, so no partitioner: "
                "leave partitioner out (a partitioned edge takes one)",
            )

    def check_edge_config(self, edge: EdgeSpec, pointer: str) -> None:
        """Jet's edge tuning, where Spark has a match for it; a value that would change
        nothing is refused rather than accepted and ignored (SPEC §3)."""
        config, defaults = edge.config, EdgeConfig()
        kinds = {v.name: PROCESSORS.get(v.processor) for v in self.spec.dag.vertices}
        sender, receiver = kinds.get(edge.source), kinds.get(edge.to)
        for field, why in UNSUPPORTED_EDGE_CONFIG.items():
            if getattr(config, field) != getattr(defaults, field):
                self.problem(f"{pointer}/config/{field}", f"edge {edge.label}: {field} {why}")
        if config.outbox_capacity != defaults.outbox_capacity and not (
            sender is not None and sender.batches_in_python
        ):
            self.problem(
                f"{pointer}/config/outbox_capacity",
                f"edge {edge.label}: outbox_capacity bounds the batches a python vertex, "
                "source.sequence or source.redis_stream hands over; a built-in's items stay "
                "in the JVM, which has no outbox to bound: leave it at its default",
            )
        if config.queue_size != defaults.queue_size and not (
            receiver is not None and receiver.name == "python"
        ):
            self.problem(
                f"{pointer}/config/queue_size",
                f"edge {edge.label}: queue_size bounds a python vertex's inbox batches; a "
                "built-in receiver pulls rows one at a time inside the JVM, with no queue to "
                "bound: leave it at its default",
            )

    def check_partitioner(self, edge: EdgeSpec, pointer: str) -> None:
        if edge.partitioner in BUILT_IN_PARTITIONERS:
            return
        module, _, function = edge.partitioner.removeprefix("python:").partition(":")
        if not edge.partitioner.startswith("python:") or not module or not function:
            self.problem(
                f"{pointer}/partitioner",
                f"edge {edge.label}: partitioner must be "
                "murmur3, spark_hash or python:module:function",
            )
        elif not module_allowed(module, self.limits.allowed_python_modules):
            self.problem(
                f"{pointer}/partitioner",
                f"edge {edge.label}: module {module!r} is not in the allowed Python modules",
            )

    def check_ordinals(
        self,
        inbound: dict[str, list[int]],
        outbound: dict[str, list[int]],
        edges_at: dict[str, list[int]],
    ) -> None:
        for name in self.index:
            for direction, ordinals in (("inbound", inbound[name]), ("outbound", outbound[name])):
                if sorted(ordinals) != list(range(len(ordinals))):
                    field = "to_ordinal" if direction == "inbound" else "from_ordinal"
                    at = edges_at[f"{direction}:{name}"][0]
                    self.problem(
                        f"/dag/edges/{at}/{field}",
                        f"vertex {name!r}: {direction} "
                        f"ordinals {sorted(ordinals)} are not contiguous from 0",
                    )

    def check_arity(
        self, inbound: dict[str, list[EdgeSpec]], outbound: dict[str, list[EdgeSpec]]
    ) -> None:
        for vertex in self.spec.dag.vertices:
            kind = PROCESSORS.get(vertex.processor)
            if kind is None or vertex.name not in self.index:
                continue
            least, most = kind.inbound
            count = len(inbound[vertex.name])
            if count < least or (most is not None and count > most):
                wanted = f"{least}" if least == most else f"{least}..{most or 'many'}"
                self.problem(
                    self.vertex_ptr(vertex.name),
                    f"vertex {vertex.name!r} "
                    f"({kind.name}) has {count} inbound edges; it takes {wanted}",
                )
            if kind.role == "sink" and outbound[vertex.name]:
                self.problem(
                    self.vertex_ptr(vertex.name),
                    f"vertex {vertex.name!r} is a sink and cannot have outbound edges",
                )

    def check_hash_join(self, inbound: dict[str, list[EdgeSpec]]) -> None:
        for vertex in self.spec.dag.vertices:
            if vertex.processor != "hash_join" or len(inbound[vertex.name]) != 2:
                continue
            by_ordinal = {e.to_ordinal: e for e in inbound[vertex.name]}
            build, probe = by_ordinal.get(0), by_ordinal.get(1)
            if build and probe and not build.priority < probe.priority:
                self.problem(
                    self.vertex_ptr(vertex.name),
                    f"vertex {vertex.name!r}: the "
                    f"build edge {build.label} (ordinal 0) needs a lower priority "
                    f"number than the probe edge {probe.label}",
                )

    def check_parallelism(self, members: int) -> dict[str, int]:
        default = self.spec.config.local_parallelism or DEFAULT_LOCAL_PARALLELISM
        local: dict[str, int] = {}
        for vertex in self.spec.dag.vertices:
            lp = vertex.local_parallelism or default
            local[vertex.name] = lp
            if members * lp > self.limits.max_parallelism:
                self.problem(
                    self.vertex_ptr(vertex.name, "/local_parallelism"),
                    f"vertex {vertex.name!r}: parallelism {members} x {lp} exceeds "
                    f"{self.limits.max_parallelism}",
                )
        return local


def expressions_in(value: object) -> Iterable[tuple[str, str]]:
    """Each expression a param holds (a string, a dict's or a list's string values), with its
    pointer below the param."""
    if isinstance(value, str):
        yield "", value
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str):
                yield f"/{key}", item
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str):
                yield f"/{i}", item


def _topological_order(names: list[str], edges: list[EdgeSpec]) -> list[str] | None:
    """Kahn's algorithm; None when there is a cycle."""
    indegree = dict.fromkeys(names, 0)
    children: dict[str, list[str]] = defaultdict(list)
    for edge in edges:
        children[edge.source].append(edge.to)
        indegree[edge.to] += 1
    ready = deque(n for n in names if indegree[n] == 0)
    order: list[str] = []
    while ready:
        name = ready.popleft()
        order.append(name)
        for child in children[name]:
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
    return order if len(order) == len(names) else None


def _ancestor_sets(
    order: list[str], inbound: dict[str, list[EdgeSpec]], bit: dict[str, int]
) -> dict[str, int]:
    """Each vertex's ancestors as a bit set (bit ``bit[name]``), in one pass in topological
    order: linear in the DAG's size (times V/64 word operations)."""
    ancestors: dict[str, int] = {}
    for name in order:
        below = 0
        for edge in inbound[name]:
            below |= ancestors[edge.source] | bit[edge.source]
        ancestors[name] = below
    return ancestors


def _check_graph(
    checker: _Checker, inbound: dict[str, list[EdgeSpec]], edges: list[EdgeSpec]
) -> list[str]:
    names = list(checker.index)
    order = _topological_order(names, edges)
    if order is None:
        checker.problem("/dag/edges", "the DAG has a cycle")
        return names
    bit = {name: 1 << i for i, name in enumerate(names)}
    ancestors = _ancestor_sets(order, inbound, bit)
    sources = 0
    for name in names:
        kind = PROCESSORS.get(checker.spec.dag.vertices[checker.index[name]].processor)
        if kind is not None and (
            kind.role == "source" or (kind.name == "python" and not inbound[name])
        ):
            sources |= bit[name]
    for name in names:
        if PROCESSORS.get(checker.spec.dag.vertices[checker.index[name]].processor) is None:
            continue
        if not (sources & bit[name]) and not (sources & ancestors[name]):
            checker.problem(checker.vertex_ptr(name), f"vertex {name!r} has no path from a source")
    _check_rejoin_deadlock(checker, inbound, ancestors, bit)
    return order


def _check_rejoin_deadlock(
    checker: _Checker,
    inbound: dict[str, list[EdgeSpec]],
    ancestors: dict[str, int],
    bit: dict[str, int],
) -> None:
    """The seeds' fork-and-rejoin: a lower-priority edge of a rejoin must be buffered."""
    names = list(checker.index)
    at = {id(edge): i for i, edge in enumerate(checker.spec.dag.edges)}
    for name, edges in inbound.items():
        for high in edges:
            for low in edges:
                if low.priority <= high.priority or low.buffered:
                    continue
                shared = (ancestors[high.source] | bit[high.source]) & (
                    ancestors[low.source] | bit[low.source]
                )
                if shared:
                    first = min(n for i, n in enumerate(names) if shared >> i & 1)
                    checker.problem(
                        f"/dag/edges/{at[id(low)]}/buffered",
                        f"vertex {name!r}: edges {high.label} "
                        f"(priority {high.priority}) and {low.label} (priority "
                        f"{low.priority}) rejoin a fork from "
                        f"{first!r}; this deadlocks unless the "
                        "lower-priority edge is buffered",
                    )
                if len(checker.problems) > checker.bounds.problems:
                    return


def validate_job(
    spec: JobSpec,
    limits: DagLimits | None = None,
    *,
    default_members: int = DEFAULT_MEMBERS,
    data: DataSettings | None = None,
) -> ValidatedDag:
    """Every check of SPEC §3; raises ``DagValidationError`` listing all problems.

    ``default_members`` stands for an unset ``config.members``: 1 at submission, the
    executors a worker sees when it claims the job (``jetspark.dag.members``). ``data``: the
    data roots paths are held to (default: the settings')."""
    checker = _Checker(spec, limits or DagLimits(), data)
    params = checker.check_vertices()
    checker.check_edges()
    checker.check_config()
    if checker.problems:
        raise checker.refusal()
    edges = spec.dag.edges
    inbound: dict[str, list[EdgeSpec]] = {n: [] for n in checker.index}
    outbound: dict[str, list[EdgeSpec]] = {n: [] for n in checker.index}
    edges_at: dict[str, list[int]] = defaultdict(list)
    for i, edge in enumerate(edges):
        inbound[edge.to].append(edge)
        outbound[edge.source].append(edge)
        edges_at[f"inbound:{edge.to}"].append(i)
        edges_at[f"outbound:{edge.source}"].append(i)
    checker.check_ordinals(
        {n: [e.to_ordinal for e in es] for n, es in inbound.items()},
        {n: [e.from_ordinal for e in es] for n, es in outbound.items()},
        edges_at,
    )
    checker.check_arity(inbound, outbound)
    checker.check_hash_join(inbound)
    order = _check_graph(checker, inbound, edges)
    members = spec.config.members or default_members
    local = checker.check_parallelism(members)
    if checker.problems:
        raise checker.refusal()
    return ValidatedDag(
        spec=spec,
        order=tuple(order),
        vertices={v.name: v for v in spec.dag.vertices},
        params=params,
        inbound={n: tuple(sorted(es, key=lambda e: e.to_ordinal)) for n, es in inbound.items()},
        outbound={n: tuple(sorted(es, key=lambda e: e.from_ordinal)) for n, es in outbound.items()},
        members=members,
        local_parallelism=local,
        parallelism={n: members * lp for n, lp in local.items()},
    )
