"""``PythonOp``: the ``python`` entry of the translation table (SPEC §5 custom processors).

The processor runtime it runs in each Spark task is ``worker.engine.python``."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from functools import partial
from typing import Any

import pyarrow as pa
from pyspark import AccumulatorParam
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    BinaryType,
    IntegerType,
    LongType,
    StructField,
    StructType,
    _parse_datatype_string,
)

from jetspark.dag.kinds import PythonParams
from jetspark.processor.loading import declared_schema, load_processor_class
from worker.engine.ops.base import Op, OpContext
from worker.engine.python.arrow_io import (
    EPOCH_FIELDS,
    ITEM,
    KIND,
    NUMBER,
    OUT_ORDINAL,
    STATE,
    STATE_KEY,
    STATE_VALUE,
    SUMMARY,
    WATERMARKS,
)
from worker.engine.python.frames import packed_frame, source_frame, with_state
from worker.engine.python.task import EpochTask, TaskPlan, run_partition
from worker.engine.routing import SLOT, with_slot
from worker.engine.state_columns import PARTITION, PROCESSOR

INTERNAL = "__jetspark"


class ProcessorSetupError(Exception):
    """The vertex's processor class or its output schema is unusable."""


class LatestMetrics(AccumulatorParam[dict[str, Any]]):
    """Keeps the last report per ``vertex/index``: a re-run task replaces, never adds."""

    def zero(self, value: dict[str, Any]) -> dict[str, Any]:
        return {}

    def addInPlace(self, value1: dict[str, Any], value2: dict[str, Any]) -> dict[str, Any]:
        value1.update(value2)
        return value1


class PythonOp(Op):
    """Runs ``params.class`` as processor g on Spark partition g through ``mapInArrow``.

    The class is loaded only from the allowed modules, here and again in each task. Its
    ``schema_for(args)`` fixes the output columns; with several outbound edges each row also
    carries ``__ordinal`` and the runner hands every edge its own rows.

    In an epoch run (a streaming job) the processors' snapshot entries become the vertex's
    state (``epoch.state_out``), restored into the next epoch's processors before any item,
    and the watermarks they emit are recorded with the tracker (``forwards_own_watermarks``).
    The instances live on in the Python workers from epoch to epoch (``python.instances``):
    each epoch's tasks are told this run and the epoch whose state a kept instance must
    hold to be taken back. The class comes only from the job's ``allowed_modules``.
    """

    forwards_own_watermarks = True
    recomputable = False  # processors keep state and emit once: a fork of it is kept

    def __init__(self) -> None:
        self.metrics: dict[str, Any] = {}
        """The last run's metrics accumulator per vertex name (for the metrics issue)."""
        self.run = uuid.uuid4().hex
        """Names this run of the job to the Python workers' instance caches: a job's ops
        are made anew at each start, restart and replay, so no instance outlives its run."""
        self.generations: dict[str, int] = {}
        """Per vertex, the epoch whose tasks ran last in this run: the state its kept
        instances hold, and the state the next epoch's restore entries are."""

    def apply(self, ctx: OpContext) -> DataFrame:
        params = ctx.params
        if not isinstance(params, PythonParams):
            raise ProcessorSetupError(f"vertex {ctx.vertex.name}: params are not PythonParams")
        allowed = ctx.allowed_modules
        processor_class = load_processor_class(params.class_, allowed)
        outbound = ctx.outbound
        tagged = len(outbound) > 1
        struct = _output_struct(declared_schema(processor_class, params.args), tagged)
        epoch = self._epoch_task(ctx)
        if epoch is not None:
            struct = _epoch_struct(struct)
        accumulator = ctx.spark.sparkContext.accumulator({}, LatestMetrics())
        self.metrics[ctx.vertex.name] = accumulator
        plan = TaskPlan(
            vertex=ctx.vertex.name,
            class_spec=params.class_,
            allowed_modules=allowed,
            args=dict(params.args),
            local_parallelism=ctx.vertex.local_parallelism,
            parallelism=ctx.vertex.parallelism,
            outbox_capacities=tuple(e.config.outbox_capacity for e in outbound),
            queue_sizes={e.to_ordinal: e.config.queue_size for e in ctx.inbound},
            input_shape=_input_shape(len(ctx.inputs)),
            inbound_order=tuple(
                e.to_ordinal for e in sorted(ctx.inbound, key=lambda e: (e.priority, e.to_ordinal))
            ),
            schema=to_arrow_schema(struct),
            tagged=tagged,
            metrics=accumulator,
            metrics_url=ctx.metrics_url,
            metrics_cluster=ctx.metrics_cluster,
            epoch=epoch,
            redis=ctx.redis,
        )
        if epoch is not None:
            return self._in_epoch(ctx, plan, struct)
        frame = self._input_frame(ctx)
        # A vertex with no outbound edge is run by the runner, like every dead end.
        return frame.mapInArrow(partial(_run, plan), struct)

    def _in_epoch(self, ctx: OpContext, plan: TaskPlan, struct: StructType) -> DataFrame:
        """Run the epoch's tasks now (once, kept), record the watermarks the processors
        emitted and carry their snapshot entries as the vertex's state."""
        assert ctx.epoch is not None
        name, n = ctx.vertex.name, ctx.vertex.parallelism
        state = ctx.epoch.state_in.get(name)
        frame = self._input_frame(ctx) if state is None else self._input_with_state(ctx, state)
        kept = ctx.keep(frame.mapInArrow(partial(_run, plan), struct))
        reports = (
            kept.where(F.col(KIND) >= F.lit(WATERMARKS))
            .select(KIND, PROCESSOR, PARTITION, NUMBER)
            .collect()
        )
        marks = sorted(
            (int(r[PROCESSOR]), int(r[PARTITION]), int(r[NUMBER]))
            for r in reports
            if r[KIND] == WATERMARKS
        )
        # Every task of the epoch ran to its end: the instances they kept hold its state.
        self.generations[name] = ctx.epoch.epoch
        for g, _, wm in marks:  # raises WatermarkNotIncreasing naming the vertex
            ctx.epoch.watermarks.forward(name, g, wm)
        if any(r[KIND] == SUMMARY and r[NUMBER] for r in reports):
            entries = kept.where(F.col(KIND) == F.lit(STATE))
            columns = entries.select(PROCESSOR, PARTITION, STATE_KEY, STATE_VALUE)
            ctx.epoch.state_out[name] = with_slot(columns, F.col(PROCESSOR), n)
        items = kept.where(F.col(KIND) == F.lit(ITEM))
        return items.drop(*[f.name for f in EPOCH_FIELDS])

    @staticmethod
    def _input_with_state(ctx: OpContext, state: DataFrame) -> DataFrame:
        n = ctx.vertex.parallelism
        if not ctx.inputs:
            return with_state(source_frame(ctx.spark, n), state, n)
        inputs = [
            f.drop(*[c for c in f.columns if c.startswith(INTERNAL) and c != SLOT])
            for f in ctx.inputs
        ]
        if len(inputs) == 1:
            return with_state(inputs[0], state, n)
        return packed_frame([f.drop(SLOT) for f in inputs], ctx.inbound, n, state)

    @staticmethod
    def _input_frame(ctx: OpContext) -> DataFrame:
        if not ctx.inputs:
            return source_frame(ctx.spark, ctx.vertex.parallelism)
        # Routing's own columns (``__jetspark_*``) are not fields of the user's items.
        inputs = [f.drop(*[c for c in f.columns if c.startswith(INTERNAL)]) for f in ctx.inputs]
        if len(inputs) == 1:
            return inputs[0]
        return packed_frame(inputs, ctx.inbound, ctx.vertex.parallelism)

    def wakes(
        self,
        state: DataFrame | None,
        before: Mapping[int, int | None],
        after: Mapping[int, int | None],
    ) -> bool:
        """A risen watermark is offered to the processors (``try_process_watermark``, after
        ``try_process``): a lull runs one small Spark job for them."""
        return any(
            wm is not None and (before.get(g) is None or wm > (before.get(g) or 0))
            for g, wm in after.items()
        )

    def _epoch_task(self, ctx: OpContext) -> EpochTask | None:
        if ctx.epoch is None:
            return None
        name = ctx.vertex.name
        before = ctx.epoch.wm_before.get(name, {})
        offers: dict[int, int] = {}
        for g, wm in ctx.epoch.wm_after.get(name, {}).items():
            previous = before.get(g)
            if wm is not None and (previous is None or wm > previous):
                offers[g] = wm  # it rose: offered once the epoch's items are processed
        return EpochTask(
            restore=name in ctx.epoch.state_in,
            watermarks=offers,
            final=ctx.epoch.final,
            partition_count=ctx.partition_count,
            run=self.run,
            generation=ctx.epoch.epoch,
            # The state carried in is what the vertex's last epoch in this run left (a
            # quiet epoch carries it unchanged); the first epoch of a run restores.
            expects=self.generations.get(name),
        )

    def last_metrics(self, vertex: str) -> dict[str, Any]:
        """``vertex/index`` → ``TaskletMetrics`` as a dict, from the last run of ``vertex``."""
        accumulator = self.metrics.get(vertex)
        return dict(accumulator.value) if accumulator is not None else {}


def _run(plan: TaskPlan, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    return run_partition(plan, batches)


def _epoch_struct(struct: StructType) -> StructType:
    """The output of an epoch run: the items' fields (nullable: other rows leave them null)
    and the epoch's own columns (``arrow_io.EPOCH_FIELDS``)."""
    fields = [StructField(f.name, f.dataType, True, f.metadata) for f in struct.fields]
    fields += [
        StructField(KIND, IntegerType(), False),
        StructField(PROCESSOR, IntegerType(), True),
        StructField(PARTITION, IntegerType(), True),
        StructField(STATE_KEY, BinaryType(), True),
        StructField(STATE_VALUE, BinaryType(), True),
        StructField(NUMBER, LongType(), True),
    ]
    return StructType(fields)


def _input_shape(inputs: int) -> str:
    return "source" if inputs == 0 else "native" if inputs == 1 else "packed"


def _output_struct(ddl: str, tagged: bool) -> StructType:
    try:
        struct = _parse_datatype_string(ddl)
    except Exception as error:
        raise ProcessorSetupError(
            f"output_schema {ddl!r} is not valid Spark DDL: {error}"
        ) from error
    if not isinstance(struct, StructType):
        struct = StructType().add("value", struct)
    if OUT_ORDINAL in struct.fieldNames():
        raise ProcessorSetupError(f"output_schema may not name {OUT_ORDINAL!r}")
    if tagged:
        struct = struct.add(OUT_ORDINAL, IntegerType(), nullable=False)
    return struct
