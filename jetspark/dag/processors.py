"""Built-in processors (SPEC §5): each kind's params model and the facts validation needs."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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

    items: list[dict[str, Scalar]]
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
class ProcessorKind:
    """What validation and planning need to know of one processor kind."""

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


_KINDS = (
    ProcessorKind("source.items", ItemsSource, "source", (0, 0)),
    ProcessorKind("source.sequence", SequenceSource, "source", (0, 0)),
    ProcessorKind("source.files", FilesSource, "source", (0, 0)),
    ProcessorKind("source.redis_stream", RedisStreamSource, "source", (0, 0)),
    ProcessorKind("map", MapParams, "transform", (1, 1), ("select",)),
    ProcessorKind("filter", FilterParams, "transform", (1, 1), ("where",)),
    ProcessorKind("flat_map", FlatMapParams, "transform", (1, 1), ("explode",)),
    ProcessorKind("aggregate", AggregateParams, "transform", (1, 1), ("key",), ("aggregations",)),
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
    ),
    ProcessorKind("hash_join", HashJoinParams, "transform", (2, 2), ("build_key", "probe_key")),
    ProcessorKind("sort", SortParams, "transform", (1, 1), ("by",)),
    ProcessorKind("sink.results", NoParams, "sink", (1, None)),
    ProcessorKind("sink.files", FilesSink, "sink", (1, None)),
    ProcessorKind("sink.redis_map", RedisMapSink, "sink", (1, None), ("key",)),
    ProcessorKind("sink.redis_stream", RedisStreamSink, "sink", (1, None)),
    ProcessorKind("sink.logger", NoParams, "sink", (1, None)),
    ProcessorKind("python", PythonParams, "transform", (0, None)),
)

PROCESSORS: dict[str, ProcessorKind] = {kind.name: kind for kind in _KINDS}


def get_processor(name: str) -> ProcessorKind | None:
    return PROCESSORS.get(name)
