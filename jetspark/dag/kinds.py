"""The registry of processor kinds (SPEC §5): what each kind *is*, declared once.

A kind's entry (``ProcessorKind`` in ``PROCESSORS``) gives its params model, its role and
inbound arity, the params holding expressions, its own checks, whether it is bounded and
needs event time, and the resources it touches (data paths, Redis names, connections, Kafka
clusters and topics). Validation, planning, the snapshot rules, the Redis-name rules and the
Kafka topic rules read these facts from here and nowhere else. The engine's half of a kind
is its op (``worker.engine.ops.table``; the op's ``planner`` moves a source through its input
epoch by epoch): a test holds the two halves together (``tests/engine/test_kinds.py``).
docs/ENGINE.md shows how to add a kind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from jetspark.settings import DagLimits, EngineBounds

Scalar = str | int | float | bool | None
Expr = Annotated[str, Field(min_length=1, max_length=4096)]
Field_ = Annotated[str, Field(min_length=1, max_length=256)]
Name = Annotated[str, Field(min_length=1, max_length=256, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
"""A field or alias the user names (``jetspark.dag.expressions.IDENTIFIER``)."""


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class FileFormat(StrEnum):
    text = "text"
    csv = "csv"
    json = "json"
    parquet = "parquet"


class ItemsSource(Params):
    """``timestamp_field``: the items' event time (integer ms); each processor then emits the
    watermark of its items' greatest one, as ``insert_watermarks`` would with no lag."""

    # At least one: the items are the only thing that types the source's columns, so an empty
    # source would fail only at run time, at the first field a downstream vertex names.
    items: Annotated[list[dict[str, Scalar]], Field(min_length=1)]
    timestamp_field: Name | None = None

    @model_validator(mode="after")
    def _timestamped(self) -> ItemsSource:
        field = self.timestamp_field
        if field is None:
            return self
        for i, item in enumerate(self.items):
            value = item.get(field)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(
                    f"timestamp_field {field!r}: item {i} has no integer (ms) there: {value!r}"
                )
        return self


class SequenceSource(Params):
    count: Annotated[int, Field(ge=0)] | None
    rate_per_s: Annotated[float, Field(gt=0)] | None = None
    start: int = 0


class FilesSource(Params):
    path: Annotated[str, Field(min_length=1)]
    format: FileFormat = FileFormat.text
    watch: bool = False


RedisKey = Annotated[str, Field(min_length=1, max_length=4096, pattern=r"^[^\x00]+$")]
"""A full Redis key name, as the user gives it (no namespace is added): non-empty, no NUL."""


class RedisStreamSource(Params):
    """Stream g, g+P, g+2P... to processor g; ``start`` "0" reads each stream from its
    beginning, "$" only what is added after the job started."""

    streams: Annotated[list[RedisKey], Field(min_length=1)]
    start: Literal["0", "$"] = "0"
    max_per_epoch: Annotated[int, Field(ge=1)] | None = None

    @field_validator("streams")
    @classmethod
    def _distinct(cls, streams: list[str]) -> list[str]:
        if len(set(streams)) != len(streams):
            raise ValueError("a stream is named twice")
        return streams


class MapParams(Params):
    select: Annotated[dict[Name, Expr], Field(min_length=1)]


class FilterParams(Params):
    where: Expr


class FlatMapParams(Params):
    explode: Expr
    as_: Name = Field(alias="as")


class AggregateParams(Params):
    key: Expr | None = None
    aggregations: Annotated[dict[Name, Expr], Field(min_length=1)]
    stage: Literal["single", "accumulate", "combine"] = "single"


class InsertWatermarksParams(Params):
    timestamp: Expr
    allowed_lag_ms: Annotated[int, Field(ge=0)] = 0
    idle_timeout_ms: Annotated[int, Field(ge=1)] | None = None
    max_lull_ms: Annotated[int, Field(ge=1)] | None = None
    """An input quiet this long has its watermark advanced with the wall clock (a lull)."""


class WindowParams(Params):
    timestamp: Expr
    type: Literal["tumbling", "sliding", "session"]
    size_ms: Annotated[int, Field(ge=1)] | None = None
    slide_ms: Annotated[int, Field(ge=1)] | None = None
    gap_ms: Annotated[int, Field(ge=1)] | None = None
    key: Expr | None = None
    aggregations: Annotated[dict[Name, Expr], Field(min_length=1)]


class HashJoinParams(Params):
    build_key: Expr
    probe_key: Expr
    how: Literal["inner", "left"] = "inner"


class SortParams(Params):
    by: Expr | Annotated[list[Expr], Field(min_length=1)]


class NoParams(Params):
    pass


class FilesSink(Params):
    path: Annotated[str, Field(min_length=1)]
    format: FileFormat = FileFormat.json


class RedisMapSink(Params):
    map: Field_
    key: Expr


class RedisStreamSink(Params):
    """XADD every item to ``stream`` (a full key name) with ids fixed per epoch."""

    stream: RedisKey
    maxlen: Annotated[int, Field(ge=1)] | None = None


TableName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=256,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$",
    ),
]
"""A database table as ``table`` or ``schema.table``: each part a checked identifier, quoted
by the database's own dialect where it is used, so a name is never SQL text. Names are exact
(PostgreSQL keeps an unquoted ``CREATE TABLE Sales`` as ``sales``)."""


def _distinct_names(names: list[str] | None, what: str) -> list[str] | None:
    if names is not None and len(set(names)) != len(names):
        raise ValueError(f"a {what} is named twice")
    return names


DEFAULT_FETCH_SIZE = 10_000
"""Rows a JDBC read fetches per round trip unless told: a bounded buffer per read (Spark's
own default, 0, lets PostgreSQL's driver hold a whole partition), and the fastest of 1000,
10000 and 100000 for a 5M-row PostgreSQL read in one session here."""
MAX_FETCH_SIZE = 1_000_000


class JdbcSource(Params):
    """A table of an operator-named connection (``JETSPARK_JDBC_CONNECTIONS``), read through
    Spark's JDBC source. ``where`` is a checked expression, as ``filter``'s, pushed down to
    the database where Spark can; ``partition_column`` with both bounds splits the read over
    the vertex's processors (rows outside the bounds are read too, by the first and last).
    ``incremental_column`` makes it a stream: each epoch reads the rows whose value of that
    (monotonic) column is past the last one read, its position kept in the snapshots.
    ``fetch_size`` rows are fetched per round trip, so a read holds that many at a time
    (Spark's own default, 0, lets PostgreSQL's driver hold a whole partition's rows)."""

    connection: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")]
    table: TableName
    columns: Annotated[list[Name], Field(min_length=1, max_length=1024)] | None = None
    where: Expr | None = None
    partition_column: Name | None = None
    lower_bound: int | None = None
    upper_bound: int | None = None
    incremental_column: Name | None = None
    fetch_size: Annotated[int, Field(ge=1, le=MAX_FETCH_SIZE)] = DEFAULT_FETCH_SIZE

    @field_validator("columns")
    @classmethod
    def _distinct(cls, columns: list[str] | None) -> list[str] | None:
        return _distinct_names(columns, "column")

    @model_validator(mode="after")
    def _bounds(self) -> JdbcSource:
        bounds = (self.lower_bound, self.upper_bound)
        if self.partition_column is None:
            if bounds != (None, None):
                raise ValueError("lower_bound and upper_bound need a partition_column")
        elif None in bounds:
            raise ValueError("a partition_column needs lower_bound and upper_bound")
        elif (
            self.lower_bound is not None
            and self.upper_bound is not None
            and self.lower_bound >= self.upper_bound
        ):
            raise ValueError("lower_bound must be less than upper_bound")
        if self.columns is not None:
            for name in (self.partition_column, self.incremental_column):
                if name is not None and name not in self.columns:
                    raise ValueError(f"column {name!r} must be one of the columns read")
        return self


class JdbcSink(Params):
    """Rows into a table of an operator-named connection. A batch job's rows are committed
    at once (``append`` adds them, ``overwrite`` replaces the table's rows; a failed job
    leaves the table as it was); a stream's, epoch by epoch: under exactly-once each epoch's
    rows in one transaction with a marker row of that epoch, so a replayed epoch writes
    nothing twice; otherwise plain appends (at-least-once)."""

    connection: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")]
    table: TableName
    mode: Literal["append", "overwrite"] = "append"


KafkaTopic = Annotated[str, Field(pattern=r"^[A-Za-z0-9._-]{1,249}$")]
ClusterName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")]


MAX_EVENT_TIME_MS = 7 * 24 * 3600 * 1000
"""The greatest allowed lag or idle timeout a source takes: a week."""


class KafkaSource(Params):
    """Records of ``topics`` on an operator-named cluster (``JETSPARK_KAFKA_CLUSTERS``) as
    ``{topic, partition, offset, key, value, ts}``: each epoch reads, per Kafka partition, the
    offsets planned for it (from the last one read to the partition's end when planned), the
    offsets kept in the planned ranges and the job's snapshots. Kafka partition i of the
    sorted (topic, partition) list goes to processor i % P.

    Event time is the record timestamp (``ts``): each Kafka partition's watermark is its
    greatest ``ts`` seen minus ``allowed_lag_ms``, a processor's the minimum over its
    partitions that are not idle (without records for ``idle_timeout_ms``)."""

    cluster: ClusterName
    topics: Annotated[list[KafkaTopic], Field(min_length=1, max_length=256)]
    start: Literal["earliest", "latest"] = "earliest"
    allowed_lag_ms: Annotated[int, Field(ge=0, le=MAX_EVENT_TIME_MS)] = 0
    idle_timeout_ms: Annotated[int, Field(ge=1, le=MAX_EVENT_TIME_MS)] = 60_000
    """As Jet's default event-time policy: a partition quiet for a minute is idle."""

    @field_validator("topics")
    @classmethod
    def _distinct(cls, topics: list[str]) -> list[str]:
        return _distinct_names(topics, "topic") or topics


class KafkaSink(Params):
    """Each item as a JSON record into ``topic`` with the idempotent producer, tagged with its
    job, vertex and epoch; ``key``, an expression, keys the record. Under exactly-once a
    replayed epoch writes only the records its lost attempt did not; otherwise it writes
    them again (at-least-once)."""

    cluster: ClusterName
    topic: KafkaTopic
    key: Expr | None = None


class PythonParams(Params):
    class_: Annotated[str, Field(alias="class", pattern=r"^[\w.]+:\w+$")]
    args: dict[str, Scalar | list[Scalar] | dict[str, Scalar]] = Field(default_factory=dict)


def python_class_problem(params: BaseModel, allowed: list[str]) -> str | None:
    """What is wrong with an allowed ``python`` vertex's class, if it can be told here.

    A module that is not importable in this process may still be on the workers' path: that
    is left to run time, which fails the job naming the vertex.
    """
    from jetspark.processor.loading import (
        ProcessorNotFound,
        declared_schema,
        load_processor_class,
    )

    if not isinstance(params, PythonParams):
        return None
    try:
        declared_schema(load_processor_class(params.class_, allowed), params.args)
    except ProcessorNotFound as error:
        return None if error.module_missing else str(error)
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    return None


Role = Literal["source", "transform", "sink"]


@dataclass(frozen=True)
class CheckContext:
    """What a kind's own checks may read: the submission's limits and the engine's bounds."""

    limits: DagLimits
    bounds: EngineBounds


Problem = tuple[str, str]
"""(the param it is about, or "" for the params as a whole; what is wrong)."""
KindCheck = Callable[[Any, CheckContext], list[Problem]]
"""A kind's own checks of its parsed params, beyond what its params model says."""


@dataclass(frozen=True)
class Resources:
    """The params of a kind that name something outside the job (checked at submission)."""

    paths: tuple[str, ...] = ()
    """Params holding a path, held to the data roots (``data_paths.check_path``)."""
    redis_names: tuple[str, ...] = ()
    """Params holding a Redis key name, or a list of them (``tenants.redis_names``)."""
    connections: tuple[str, ...] = ()
    """Params naming a configured connection (a database the server knows by name)."""
    kafka_cluster: str | None = None
    """The param naming an operator's Kafka cluster (``kafka.clusters``)."""
    kafka_topics: tuple[str, ...] = ()
    """Params holding a Kafka topic, or a list of them, on the ``kafka_cluster`` named: each
    held to the topics the principal may use there (``kafka.clusters.topic_problems``)."""


def _always(params: Any) -> bool:
    return True


@dataclass(frozen=True)
class ProcessorKind:
    """One processor kind: everything submission, planning and the engine need to know of it
    apart from its op (``worker.engine.ops.table``)."""

    name: str
    params_model: type[Params]
    role: Role
    inbound: tuple[int, int | None]
    """Least and most inbound edges."""
    expression_fields: tuple[str, ...] = ()
    """Params holding Spark SQL expressions (a dict's values are each an expression)."""
    aggregate_fields: tuple[str, ...] = ()
    """Params whose expressions may call aggregate functions."""
    needs_event_time: bool = False
    """The job runs in epochs (watermarks move between them)."""
    checks: tuple[KindCheck, ...] = ()
    """The kind's own checks of its parsed params (numbers under their bounds, params that
    only make sense together): each problem is refused with a 422 naming the param."""
    bounded: Callable[[Any], bool] = _always
    """As a source: is its input finite? An unbounded source makes its job a stream (run in
    epochs until stopped or read to its end)."""
    endless: Callable[[Any], bool] | None = None
    """As a source: is it never read to its end? (None: exactly when it is not bounded; a
    ``source.sequence`` with a count and a rate is unbounded, paced, yet ends.)"""
    batches_in_python: bool = False
    """As a sender it hands Arrow batches over from Python: an edge's ``outbox_capacity``
    bounds them."""
    resources: Resources = Resources()
    placement_blind: bool = False
    """As a receiver, what it makes of its rows does not depend on which of its processors
    gets which row (a table written in one transaction per epoch, a directory of files read
    as a whole, a count logged): a sender whose rows would only be moved to their
    processors' partitions for it leaves them where they are."""
    state_keys: Mapping[str, int] = field(default_factory=dict)
    """Params naming its state's keys, and the inbound ordinal each is over (snapshots)."""

    def is_bounded(self, params: Any) -> bool:
        return self.role != "source" or self.bounded(params)

    def is_endless(self, params: Any) -> bool:
        if self.role != "source":
            return False
        return self.endless(params) if self.endless is not None else not self.bounded(params)


# -- the kinds' own checks ----------------------------------------------------------------------
def _over(field_: str, value: float | None, bound: float, what: str = "") -> list[Problem]:
    if value is None or value <= bound:
        return []
    return [(field_, f"{field_} is over its bound {bound:g}{what}")]


def _sequence_numbers(params: SequenceSource, ctx: CheckContext) -> list[Problem]:
    return _over("count", params.count, ctx.bounds.sequence_count) + _over(
        "rate_per_s", params.rate_per_s, ctx.bounds.rate_per_s
    )


WINDOW_SHAPE: dict[str, tuple[set[str], set[str]]] = {
    "tumbling": ({"size_ms"}, {"slide_ms", "gap_ms"}),
    "sliding": ({"size_ms", "slide_ms"}, {"gap_ms"}),
    "session": ({"gap_ms"}, {"size_ms", "slide_ms"}),
}
"""Window type -> the params it needs and the params it has no use for (refused)."""


def _window_shape(params: WindowParams, ctx: CheckContext) -> list[Problem]:
    needed, unused = WINDOW_SHAPE[params.type]
    problems = [
        (f, f"a {params.type} window needs {f}")
        for f in sorted(needed)
        if getattr(params, f) is None
    ]
    problems += [
        (f, f"a {params.type} window has no {f}: leave it out")
        for f in sorted(unused)
        if getattr(params, f) is not None
    ]
    for f in ("size_ms", "slide_ms", "gap_ms"):
        problems += _over(f, getattr(params, f), ctx.bounds.window_ms)
    if params.size_ms and params.slide_ms:
        windows = params.size_ms / params.slide_ms
        problems += _over("slide_ms", windows, ctx.bounds.windows_per_item, " (windows per item)")
    return problems


def module_allowed(module: str, allowed: list[str]) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in allowed)


def _python_class(params: PythonParams, ctx: CheckContext) -> list[Problem]:
    allowed = ctx.limits.allowed_python_modules
    module = params.class_.split(":", 1)[0]
    if not module_allowed(module, allowed):
        return [("class", f"module {module!r} is not in the allowed Python modules")]
    problem = python_class_problem(params, allowed)
    return [] if problem is None else [("class", problem)]


def _sequence_bounded(params: SequenceSource) -> bool:
    return params.count is not None and params.rate_per_s is None


def _sequence_endless(params: SequenceSource) -> bool:
    return params.count is None


def _files_bounded(params: FilesSource) -> bool:
    return not params.watch


def _never(params: Any) -> bool:
    return False


def _jdbc_bounded(params: JdbcSource) -> bool:
    return params.incremental_column is None


# -- the registry -------------------------------------------------------------------------------
_KINDS = (
    ProcessorKind("source.items", ItemsSource, "source", (0, 0)),
    ProcessorKind(
        "source.sequence",
        SequenceSource,
        "source",
        (0, 0),
        checks=(_sequence_numbers,),
        bounded=_sequence_bounded,
        endless=_sequence_endless,
        batches_in_python=True,
    ),
    ProcessorKind(
        "source.files",
        FilesSource,
        "source",
        (0, 0),
        bounded=_files_bounded,
        resources=Resources(paths=("path",)),
    ),
    ProcessorKind(
        "source.redis_stream",
        RedisStreamSource,
        "source",
        (0, 0),
        bounded=_never,
        batches_in_python=True,
        resources=Resources(redis_names=("streams",)),
    ),
    ProcessorKind(
        "source.jdbc",
        JdbcSource,
        "source",
        (0, 0),
        ("where",),
        bounded=_jdbc_bounded,
        resources=Resources(connections=("connection",)),
    ),
    ProcessorKind(
        "source.kafka",
        KafkaSource,
        "source",
        (0, 0),
        bounded=_never,
        resources=Resources(kafka_cluster="cluster", kafka_topics=("topics",)),
    ),
    ProcessorKind("map", MapParams, "transform", (1, 1), ("select",)),
    ProcessorKind("filter", FilterParams, "transform", (1, 1), ("where",)),
    ProcessorKind("flat_map", FlatMapParams, "transform", (1, 1), ("explode",)),
    ProcessorKind(
        "aggregate",
        AggregateParams,
        "transform",
        (1, 1),
        ("key",),
        ("aggregations",),
        state_keys={"key": 0},
    ),
    ProcessorKind(
        "insert_watermarks",
        InsertWatermarksParams,
        "transform",
        (1, 1),
        ("timestamp",),
        needs_event_time=True,
    ),
    ProcessorKind(
        "window",
        WindowParams,
        "transform",
        (1, 1),
        ("timestamp", "key"),
        ("aggregations",),
        needs_event_time=True,
        checks=(_window_shape,),
        state_keys={"key": 0},
    ),
    ProcessorKind(
        "hash_join",
        HashJoinParams,
        "transform",
        (2, 2),
        ("build_key", "probe_key"),
        state_keys={"build_key": 0, "probe_key": 1},
    ),
    ProcessorKind("sort", SortParams, "transform", (1, 1), ("by",)),
    ProcessorKind("sink.results", NoParams, "sink", (1, None)),
    ProcessorKind(
        "sink.files",
        FilesSink,
        "sink",
        (1, None),
        resources=Resources(paths=("path",)),
        placement_blind=True,
    ),
    ProcessorKind(
        "sink.redis_map",
        RedisMapSink,
        "sink",
        (1, None),
        ("key",),
        resources=Resources(redis_names=("map",)),
    ),
    ProcessorKind(
        "sink.redis_stream",
        RedisStreamSink,
        "sink",
        (1, None),
        resources=Resources(redis_names=("stream",)),
    ),
    ProcessorKind(
        "sink.jdbc",
        JdbcSink,
        "sink",
        (1, None),
        resources=Resources(connections=("connection",)),
        placement_blind=True,
    ),
    ProcessorKind(
        "sink.kafka",
        KafkaSink,
        "sink",
        (1, None),
        ("key",),
        resources=Resources(kafka_cluster="cluster", kafka_topics=("topic",)),
    ),
    ProcessorKind("sink.logger", NoParams, "sink", (1, None), placement_blind=True),
    ProcessorKind(
        "python",
        PythonParams,
        "transform",
        (0, None),
        checks=(_python_class,),
        batches_in_python=True,
    ),
)

PROCESSORS: dict[str, ProcessorKind] = {kind.name: kind for kind in _KINDS}
"""Every processor kind by name: the one registry."""


def get_processor(name: str) -> ProcessorKind | None:
    return PROCESSORS.get(name)
