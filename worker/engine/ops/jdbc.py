"""``source.jdbc`` and ``sink.jdbc``: database tables through Spark's JDBC data source
(``worker.engine.jdbc_io``), on operator-named connections checked against the job's principal."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

from pydantic import BaseModel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, IntegralType

from jetspark.dag import kinds as p
from jetspark.dag.expressions import quote_identifier
from jetspark.jdbc.connections import ConnectionRefused, JdbcConnections
from worker.engine.contract import JobControl
from worker.engine.errors import EngineError
from worker.engine.expressions import user_column
from worker.engine.jdbc_io import Target, append, read_table, write_committed
from worker.engine.ops.base import Op, OpContext, SourceOp, nothing, params_of, read_once
from worker.engine.ops.sinks import union_inputs
from worker.engine.routing import place, spray
from worker.engine.streaming.source_planners import Json, OncePlanner, SourcePlanner


def resolve(
    connections: JdbcConnections, principal: str, vertex: str, kind: str, name: str, table: str
) -> Target:
    """The vertex's connection if the job's principal may use it (checked again here: the
    operator may have changed the setting since the job was accepted)."""
    try:
        found = connections.for_principal(name, principal)
    except ConnectionRefused as refused:
        raise EngineError(f"{kind}: {refused}") from None
    return Target(vertex, kind, found, table)


def target_of(ctx: OpContext, connection: str, table: str) -> Target:
    principal = ctx.job_redis.principal
    return resolve(ctx.jdbc, principal, ctx.vertex.name, ctx.vertex.processor, connection, table)


Position = int | str
"""Where an incremental read is: the last value of its column read (an integer as it is, a
timestamp, date or decimal as its ISO text), JSON in the planned ranges and the snapshots."""


def _position(value: Any) -> Position | None:
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal | float | str):
        return str(value)
    raise EngineError(f"source.jdbc: an incremental column of {type(value).__name__} values")


def _literal(position: Position, data_type: DataType) -> Column:
    return F.lit(position).cast(data_type)


class JdbcPlanner(OncePlanner):
    """``source.jdbc`` without ``incremental_column``: the whole table in the first epoch
    (``OncePlanner``). With it: each epoch reads (after, until], ``until``
    the column's greatest value when the epoch is planned; under exactly-once the range is
    written down before it is read, so a replay reads the same rows. Rows committed later
    with a value at or below a position already planned are not read (the column must grow
    in commit order, as an identity column or a commit timestamp does)."""

    def __init__(self, control: JobControl) -> None:
        self.control = control

    def target(self, params: p.JdbcSource) -> Target:
        return resolve(
            self.control.jdbc,
            self.control.redis.principal,
            "",
            "source.jdbc",
            params.connection,
            params.table,
        )

    def start(self, params: BaseModel, now_ms: int) -> Json:
        if not _incremental(params):
            return super().start(params, now_ms)
        return {"after": None}

    def plan(self, params: BaseModel, offsets: Json, now_ms: int, max_items: int) -> Json:
        if not _incremental(params):
            return super().plan(params, offsets, now_ms, max_items)
        assert isinstance(params, p.JdbcSource) and params.incremental_column is not None
        after = offsets.get("after")
        spark = _spark()
        column = params.incremental_column
        frame = read_table(
            spark, self.target(params), columns=[column], where=None, partition=None, partitions=1
        )
        data_type = frame.schema[column].dataType
        if after is not None:
            frame = frame.where(F.col(quote_identifier(column)) > _literal(after, data_type))
        row = frame.agg(F.max(F.col(quote_identifier(column)))).first()
        top = _position(row[0] if row is not None else None)
        if top is None:
            return {"after": after, "until": after}
        if isinstance(top, int) and isinstance(data_type, IntegralType) and after is not None:
            top = min(top, int(after) + max_items)  # a backlog over several epochs
        return {"after": after, "until": top}

    def advance(self, params: BaseModel, offsets: Json, planned: Json) -> Json:
        if not _incremental(params):
            return super().advance(params, offsets, planned)
        return {**offsets, "after": planned["until"]}

    def exhausted(self, params: BaseModel, offsets: Json) -> bool:
        return not _incremental(params) and super().exhausted(params, offsets)

    def is_empty(self, planned: Json) -> bool:
        if "until" not in planned:
            return super().is_empty(planned)
        return planned["until"] is None or planned["until"] == planned.get("after")


def _incremental(params: BaseModel) -> bool:
    return isinstance(params, p.JdbcSource) and params.incremental_column is not None


def _spark() -> SparkSession:
    spark = SparkSession.getActiveSession() or SparkSession._instantiatedSession
    if spark is None:
        raise EngineError("source.jdbc: no SparkSession to plan an epoch with")
    return spark


class JdbcSourceOp(SourceOp):
    """A parallel read: ``local_parallelism x members`` partitions split on the partition
    column, one per processor; without one, a single read spread over the processors. With
    an incremental column, a stream: each epoch reads its planned range."""

    replayable = True  # a table read again gives its rows again

    def planner_for(self, control: JobControl) -> SourcePlanner:
        return JdbcPlanner(control)

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.JdbcSource)
        if ctx.epoch is not None and params.incremental_column is not None:
            planned = ctx.epoch.ranges[ctx.vertex.name]
            return self.read(ctx, params, planned.get("after"), planned.get("until"))
        frame = self.read(ctx, params)
        return frame if read_once(ctx) else nothing(frame)

    def read(
        self,
        ctx: OpContext,
        params: p.JdbcSource,
        after: Position | None = None,
        until: Position | None = None,
    ) -> DataFrame:
        n = ctx.vertex.parallelism
        partition = None
        if params.partition_column is not None:
            assert params.lower_bound is not None and params.upper_bound is not None
            partition = (params.partition_column, params.lower_bound, params.upper_bound)
        target = target_of(ctx, params.connection, params.table)
        where = user_column(params.where) if params.where is not None else None
        incremental = params.incremental_column
        if incremental is not None and ctx.epoch is not None:
            if until is None:
                where = F.lit(False)
            else:
                schema = read_table(
                    ctx.spark,
                    target,
                    columns=[incremental],
                    where=None,
                    partition=None,
                    partitions=1,
                ).schema
                data_type = schema[incremental].dataType
                column = F.col(quote_identifier(incremental))
                bounds = column <= _literal(until, data_type)
                if after is not None:
                    bounds = bounds & (column > _literal(after, data_type))
                where = bounds if where is None else where & bounds
        frame = read_table(
            ctx.spark,
            target,
            columns=params.columns,
            where=where,
            partition=partition,
            partitions=n,
            fetch_size=params.fetch_size,
        )
        if read_ranges(partition, n) == n:
            # Processor i reads range i, where Spark put it. Not ``coalesce(n)``: even a
            # coalesce to the partitions there are splits Spark's code generation between
            # the scan and what follows (0.5 s of a 5M-row read and aggregate).
            return frame
        return place(frame, spray(first=F.lit(0), width=n), n)


def read_ranges(partition: tuple[str, int, int] | None, n: int) -> int:
    """The reads (partitions) Spark's JDBC source splits a table into for ``n`` asked,
    by its own rule (``JDBCRelation.columnPartition``), without asking Spark: one without
    a partition column; fewer than ``n`` when the bounds hold fewer values."""
    if partition is None or n <= 1:
        return 1
    _, lower, upper = partition  # lower < upper (checked at submission)
    return min(n, upper - lower)


class JdbcSinkOp(Op):
    """A batch job's rows committed at once; a stream's per epoch, exactly once under that
    guarantee (a marker row per epoch), else appended (at-least-once)."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.JdbcSink)
        frame = union_inputs(ctx.inputs)
        target = target_of(ctx, params.connection, params.table)
        if ctx.epoch is not None and params.mode == "overwrite":
            raise EngineError(
                "sink.jdbc: mode overwrite is for batch jobs; a "
                "stream appends (exactly once under that guarantee)"
            )
        if ctx.epoch is not None and not ctx.exactly_once:
            append(ctx.spark, target, frame)
            return frame
        epoch = 0 if ctx.epoch is None else ctx.epoch.epoch
        write_committed(
            ctx.spark,
            target,
            frame,
            overwrite=params.mode == "overwrite",
            owner=ctx.owner,
            epoch=epoch,
        )
        return frame
