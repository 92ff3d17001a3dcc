"""Sink ops: results, logger, files, Redis maps and streams."""

from __future__ import annotations

import os
from collections import Counter
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import structlog
from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    FloatType,
    IntegralType,
    StringType,
    StructType,
)

from jetspark.dag import kinds as p
from jetspark.dag.data_paths import PathRefused, check_path, prepare_sink
from jetspark.dag.expressions import quote_identifier
from worker.engine.errors import EngineError
from worker.engine.expressions import user_column
from worker.engine.observed import count_rows
from worker.engine.ops.base import Op, OpContext, params_of
from worker.engine.redis_streams import now_ms, write_stream
from worker.engine.routing import (
    SLOT,
    TARGET_PROCESSOR,
    place,
    row_in_partition,
    without_slot,
)

log = structlog.get_logger("jetspark.engine")


_AS_IS = frozenset({str, int, float, bool, type(None)})


def json_safe(value: Any) -> Any:
    """A collected value as JSON can hold it; a ``Row`` (nested too) becomes a dict."""
    if type(value) in _AS_IS:
        return value
    if isinstance(value, Row):
        return {field: json_safe(v) for field, v in zip(value.__fields__, value, strict=True)}
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes | bytearray):
        return value.hex()
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    return value


_NATIVE = (StringType, IntegralType, BooleanType, DoubleType, FloatType)
"""Spark types whose values Arrow and a collected ``Row`` both hand over as the same Python
str, int, bool or float, which JSON holds as they are."""


def json_native(schema: DataType) -> bool:
    """Whether every value of ``schema`` comes over Arrow as ``json_safe`` would make it:
    native scalars, arrays and structs of them (no duplicate field names: a dict has one
    of each)."""
    if isinstance(schema, StructType):
        names = [f.name for f in schema.fields]
        unique = 0 < len(set(names)) == len(names)  # Arrow has no struct without fields
        return unique and all(json_native(f.dataType) for f in schema.fields)
    if isinstance(schema, ArrayType):
        return json_native(schema.elementType)
    return isinstance(schema, _NATIVE)


ARROW_FROM_ROWS = 1_000
"""Fewer rows known to come are collected as pickled rows: Arrow's fixed cost (its stream
and batches set up on both sides, ~30 ms) is more than it saves below about this many."""


def collect_records(frame: DataFrame, expected: int | None = None) -> list[dict[str, Any]]:
    """``frame``'s rows as JSON-safe dicts, in partition order (``expected``: how many come,
    when known).

    Over Arrow when its types allow (``json_native``) and the rows are not known to be few: a
    collect of pickled ``Row`` objects spends 0.5 s on 100k rows, Arrow 0.1 s, and its dicts
    need no ``json_safe``. Timestamps, dates, decimals, binary and maps come as ``collect``
    gives them, through ``json_safe``.
    """
    few = expected is not None and expected < ARROW_FROM_ROWS
    if not few and json_native(frame.schema):
        records: list[dict[str, Any]] = frame.toArrow().to_pylist()
        return records
    return [json_safe(row) for row in frame.collect()]


class ResultsSinkOp(Op):
    """Keeps at most ``results_cap`` records with the job; consumes every item."""

    replayable = True  # the job's results are dropped with its epochs

    def apply(self, ctx: OpContext) -> DataFrame:
        # One full pass, so every vertex's counts are complete: each processor hands over at
        # most the cap (its first rows), the driver keeps the first ``results_cap`` of them
        # in processor order, as ``limit(cap).collect()`` would.
        frame = union_inputs(ctx.inputs)
        rows = None
        if TARGET_PROCESSOR in frame.columns:
            rows = _in_processor_order(frame, ctx.results_cap)
            if rows is None:  # a partition may have been cut short: place the rows, then read
                frame = place(frame, F.col(TARGET_PROCESSOR), ctx.vertex.parallelism)
                frame = frame.drop(SLOT, TARGET_PROCESSOR)
        if rows is None and ctx.known_input is not None and ctx.known_input <= ctx.results_cap:
            rows = collect_records(frame, ctx.known_input)  # all of them: no cap to hold
        if rows is None:
            rows = collect_records(frame.where(row_in_partition() < F.lit(ctx.results_cap)))
        # Their bytes are bounded where they are written (``worker.results``).
        ctx.sink_results[ctx.vertex.name] = rows[: ctx.results_cap]
        return frame


_PARTITION = "__jetspark_partition"


def _in_processor_order(frame: DataFrame, cap: int) -> list[dict[str, Any]] | None:
    """The records of rows that name their processor (``TARGET_PROCESSOR``) but are not on its
    partition, as if they were: in processor order, each processor's first ``cap`` at most.

    Each partition hands over one row more than the cap: if one of them had more than the
    cap, a processor's rows may be missing while a later one's are kept, so None (the
    caller places them and reads again); otherwise nothing was left out.
    """
    numbered = frame.where(row_in_partition() <= F.lit(cap))
    records = collect_records(numbered.withColumn(_PARTITION, F.spark_partition_id()))
    per_partition = Counter(record.pop(_PARTITION) for record in records)
    if any(count > cap for count in per_partition.values()):
        return None
    records.sort(key=lambda record: record[TARGET_PROCESSOR])  # stable: each partition's order kept
    taken: Counter[int] = Counter()
    kept = []
    for record in records:
        processor = record.pop(TARGET_PROCESSOR)
        taken[processor] += 1
        if taken[processor] <= cap:
            kept.append(record)
    return kept


class LoggerSinkOp(Op):
    """Consumes every item (one pass, nothing kept) and logs how many arrived."""

    replayable = True

    def apply(self, ctx: OpContext) -> DataFrame:
        frame = union_inputs(ctx.inputs)
        items = count_rows(frame, vertex=ctx.vertex.name)
        log.info("sink.logger", vertex=ctx.vertex.name, items=items)
        return frame


class FilesSinkOp(Op):
    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.FilesSink)
        frame = union_inputs(ctx.inputs)
        out = frame
        if params.format is p.FileFormat.text:
            out = frame.select(
                F.to_json(F.struct(*[F.col(quote_identifier(c)) for c in frame.columns])).alias(
                    "value"
                )
            )
        writer = out.write.mode("overwrite").format(params.format.value)
        if params.format is p.FileFormat.csv:
            writer = writer.option("header", "true")
        try:
            target = check_path(params.path, ctx.data)
            # only into a directory created for this job; a batch run replaces what it wrote
            prepare_sink(target, ctx.owner, empty=ctx.epoch is None)
        except PathRefused as error:
            raise EngineError(f"sink.files: {error}") from None
        if ctx.epoch is None:
            writer.mode("append").save(target.location)
            return frame
        # An epoch writes its own directory inside the job's, overwritten when it is replayed.
        writer.save(os.path.join(target.location, f"epoch={ctx.epoch.epoch:08d}"))
        return frame


class RedisMapSinkOp(Op):
    """A Redis hash per map, like the seeds' IMap: field = key, value = the item as JSON."""

    replayable = True  # the same values overwrite its entries

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.RedisMapSink)
        target, hash_key = ctx.job_redis, ctx.job_redis.user_map(params.map)
        frame = union_inputs(ctx.inputs)
        keyed = frame.select(
            user_column(params.key).cast("string").alias("k"),
            F.to_json(F.struct(*[F.col(quote_identifier(c)) for c in frame.columns])).alias("v"),
        )

        def write(rows: Any) -> None:
            client = target.client()
            pipe = client.pipeline(transaction=False)
            for row in rows:
                pipe.hset(hash_key, row["k"], row["v"])
            pipe.execute()

        keyed.foreachPartition(write)
        return frame


class RedisStreamSinkOp(Op):
    """XADD each item, ids ``<job_t0_ms + epoch>-<n>``: a replayed epoch writes nothing twice
    (see ``worker.engine.redis_streams``). A bounded job's ids are ``<its start>-<n>``."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = params_of(ctx, p.RedisStreamSink)
        frame = union_inputs(ctx.inputs)
        epoch_ms = now_ms() if ctx.epoch is None else ctx.epoch.job_t0_ms + ctx.epoch.epoch
        done = write_stream(
            frame,
            url=ctx.job_redis.url,
            cluster=ctx.job_redis.cluster,
            stream=ctx.job_redis.user_stream(params.stream),
            maxlen=params.maxlen,
            epoch_ms=epoch_ms,
        )
        log.info(
            "sink.redis_stream",
            vertex=ctx.vertex.name,
            stream=params.stream,
            written=done.written,
            already_written=done.skipped,
        )
        return frame


def union_inputs(frames: list[DataFrame]) -> DataFrame:
    """A sink's inbound frames as one, without the routing column."""
    first, *rest = (without_slot(frame) for frame in frames)
    for other in rest:
        first = first.unionByName(other, allowMissingColumns=True)
    return first
