"""The kind of each field a DAG's vertices emit, as far as the DAG itself tells.

What a key's partition depends on besides its value: SPEC §4 hashes an integer (or a
boolean) as 8 bytes, a string (or a binary) as its bytes and anything else as JSON, so a key
that was an integer and is now a string lands in another partition. ``kind`` names those
classes: ``integer``, ``string``, ``binary``, ``fractional``, else the Spark type.

Read from SPEC §5 without running anything: sources define their fields
(``source.items`` from its items, ``source.sequence`` {seq, ts}, text files {line},
``source.redis_stream`` {stream, id, ts, fields}), and each transform's expressions are typed
by sqlglot over its input's fields. A field whose kind cannot be told so (csv, json and
parquet files, a ``python`` vertex, a function sqlglot cannot type) is unknown, never
guessed: callers compare kinds only where both are known.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from jetspark.dag import kinds as p
from jetspark.dag.plan import EdgePlan, ExecutionPlan, VertexPlan

Fields = dict[str, str | None] | None
"""A vertex's output: field -> kind (None: unknown); None when the fields are unknown."""

_T = exp.DataType.Type
_INTEGER = {_T.TINYINT, _T.SMALLINT, _T.INT, _T.BIGINT, _T.BOOLEAN}
_STRING = {_T.CHAR, _T.NCHAR, _T.VARCHAR, _T.NVARCHAR, _T.TEXT}
_BINARY = {_T.BINARY, _T.VARBINARY}
_FRACTIONAL = {_T.FLOAT, _T.DOUBLE}
_SPARK_TYPE = {"integer": "bigint", "string": "string", "binary": "binary", "fractional": "double"}
_ITEM_KINDS = {bool: "integer", int: "integer", str: "string", float: "fractional"}
_TABLE = "items"


class DagFields:
    """The fields of every vertex's output in one plan, worked out once each."""

    def __init__(self, plan: ExecutionPlan) -> None:
        self.plan = plan
        self.vertices: dict[str, VertexPlan] = {v.name: v for v in plan.vertices}
        self.inbound: dict[str, dict[int, EdgePlan]] = {}
        for edge in plan.edges:
            self.inbound.setdefault(edge.to, {})[edge.to_ordinal] = edge
        self._outputs: dict[str, Fields] = {}

    def input(self, vertex: str, ordinal: int = 0) -> Fields:
        """The fields arriving at ``vertex`` over its inbound edge ``ordinal``."""
        edge = self.inbound.get(vertex, {}).get(ordinal)
        return None if edge is None else self.output(edge.source)

    def output(self, vertex: str) -> Fields:
        if vertex not in self._outputs:
            self._outputs[vertex] = None  # a cycle (refused by validation) stays unknown
            self._outputs[vertex] = self._emitted(vertex)
        return self._outputs[vertex]

    def _emitted(self, vertex: str) -> Fields:
        params = self.vertices[vertex].params
        inbound = self.inbound.get(vertex, {})
        given = self.input(vertex) if len(inbound) == 1 else None
        match params:
            case p.ItemsSource():
                return _item_fields(params.items)
            case p.SequenceSource():
                return {"seq": "integer", "ts": "integer"}
            case p.FilesSource(format=p.FileFormat.text):
                return {"line": "string"}
            case p.RedisStreamSource():
                fields = "map<string,string>"
                return {"stream": "string", "id": "string", "ts": "integer", "fields": fields}
            case p.MapParams():
                return {f: kind(e, given) for f, e in params.select.items()}
            case p.FilterParams() | p.SortParams() | p.InsertWatermarksParams():
                return given
            case p.FlatMapParams():
                if given is None:
                    return None
                return {**given, params.as_: _element_kind(params.explode, given)}
            case p.AggregateParams():
                keyed = {} if params.key is None else {"key": kind(params.key, given)}
                finished = params.stage == "single"
                return keyed | {
                    f: kind(e, given) if finished else None for f, e in params.aggregations.items()
                }
            case p.WindowParams():
                bounds = {"window_start": "integer", "window_end": "integer"}
                keyed = {} if params.key is None else {"key": kind(params.key, given)}
                return bounds | keyed | {f: kind(e, given) for f, e in params.aggregations.items()}
            case p.HashJoinParams():
                build, probe = self.input(vertex, 0), self.input(vertex, 1)
                return None if build is None or probe is None else build | probe
        return None  # csv, json, parquet files; python; sinks


def kind(expression: str, fields: Fields) -> str | None:
    """The kind of ``expression`` over items with these fields; None when it cannot be told
    (an unknown field, a function sqlglot cannot type, an expression it cannot parse)."""
    if fields is None:
        return None
    known = tuple(sorted((f, k) for f, k in fields.items() if k is not None))
    return _typed(expression, known, False)


def _element_kind(expression: str, fields: dict[str, str | None]) -> str | None:
    """The kind of each element ``explode(expression)`` gives."""
    known = tuple(sorted((f, k) for f, k in fields.items() if k is not None))
    return _typed(expression, known, True)


@lru_cache(maxsize=1024)
def _typed(expression: str, known: tuple[tuple[str, str], ...], explode: bool) -> str | None:
    schema: dict[str, object] = {_TABLE: {f: _SPARK_TYPE.get(k, k) for f, k in known}}
    try:
        tree = sqlglot.parse_one(expression, read="spark")
        if explode:
            tree = exp.Explode(this=tree)
        query = exp.select(exp.alias_(tree, "k")).from_(_TABLE)
        typed = annotate_types(
            qualify(query, schema=schema, dialect="spark"), schema=schema, dialect="spark"
        )
        return _kind_of(typed.selects[0].type)
    except Exception:  # sqlglot raises many error types on what it cannot resolve: unknown
        return None


def _kind_of(data_type: exp.DataType | None) -> str | None:
    if data_type is None or data_type.this in (_T.UNKNOWN, _T.NULL):
        return None
    for kinds, name in (
        (_INTEGER, "integer"),
        (_STRING, "string"),
        (_BINARY, "binary"),
        (_FRACTIONAL, "fractional"),
    ):
        if data_type.this in kinds:
            return name
    return data_type.sql("spark").lower()


def _item_fields(items: list[dict[str, Any]]) -> Fields:
    """A field's kind when every item's value of it is of one (null aside)."""
    seen: dict[str, set[str]] = {}
    for item in items:
        for field, value in item.items():
            kinds = seen.setdefault(field, set())
            if value is not None:
                kinds.add(_ITEM_KINDS[type(value)])
    return {f: next(iter(k)) if len(k) == 1 else None for f, k in seen.items()}


def spark_kind(type_json: Any) -> str | None:
    """The kind of a Spark type as a schema's JSON gives it (``"long"``, ``{"type":
    "struct"...}``): what a snapshot's state schema says of its key."""
    if isinstance(type_json, str):
        simple = {"byte", "short", "integer", "long", "boolean"}
        if type_json in simple:
            return "integer"
        if type_json in ("string", "binary"):
            return type_json
        if type_json in ("float", "double"):
            return "fractional"
        return type_json
    return None  # a nested type: compared only through the DAG
