"""One run of a plan over Spark, shared by the batch walker (``runner``) and the epoch loop.

``Execution`` walks the vertices in order, routes each inbound edge and applies the ops.
Every vertex's processors are the partitions of its frame. Inbound edges of a lower
``priority`` number are consumed in full (materialised) before any edge of a higher number is
read: a hash join's build side is complete before its probe side starts. A vertex with a
``buffered`` outbound edge is persisted, so its edges read kept items instead of recomputing
them (and see the very same items even from non-deterministic expressions); so is a fork
that must not run twice (a Python vertex, or any fork in an epoch run).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import groupby
from typing import TYPE_CHECKING

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from jetspark.dag.model import ProcessingGuarantee, Routing
from jetspark.dag.plan import EdgePlan, Exchange, ExecutionPlan, VertexPlan
from worker.engine.contract import JobControl
from worker.engine.counting import VertexCounters
from worker.engine.errors import EngineError
from worker.engine.ops.base import Op, OpContext
from worker.engine.ops.table import ops_for
from worker.engine.python.failure import processor_failure
from worker.engine.routing import route, without_slot
from worker.engine.streaming.scope import EpochScope
from worker.engine.work_names import vertex_actions

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ORDINAL = "__ordinal"
"""An op whose output has this column emits each row only to the edge of that ``from_ordinal``."""


class JobCancelled(Exception):
    """The worker asked the job to stop (cancel, suspend, restart or a lost lease)."""


class VertexFailed(Exception):
    """A processor failed; the message names the vertex, the error type and its message."""

    def __init__(self, vertex: str, error: BaseException) -> None:
        self.vertex = vertex
        self.error_type = getattr(error, "error_type", type(error).__name__)
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        super().__init__(f"vertex {vertex!r} failed: {self.error_type}: {message}")


def outbound_frame(frame: DataFrame, edge: EdgePlan) -> DataFrame:
    """What a vertex emits over one outbound edge: rows of its ordinal, or all rows."""
    if ORDINAL not in frame.columns:
        return frame
    return frame.where(F.col(ORDINAL) == F.lit(edge.from_ordinal)).drop(ORDINAL)


def copies_per_item(edge: EdgePlan, receiver: VertexPlan) -> int:
    """How many processors receive each item sent over ``edge``."""
    if edge.routing is not Routing.broadcast:
        return 1
    return receiver.parallelism if edge.distributed else receiver.local_parallelism


class Execution:
    """One run of a plan: the frames built so far, what is persisted, the counters."""

    def __init__(
        self,
        spark: SparkSession,
        plan: ExecutionPlan,
        control: JobControl,
        epoch: EpochScope | None = None,
        ops: dict[str, Op] | None = None,
    ) -> None:
        self.spark, self.plan, self.control = spark, plan, control
        self.epoch = epoch
        self.ops = ops_for(plan) if ops is None else ops
        """The job's own op per vertex (a stream keeps them from epoch to epoch)."""
        self.frames: dict[str, DataFrame] = {}
        self.persisted: list[DataFrame] = []
        self.counters = VertexCounters()
        self.sink_results: dict[str, list[dict[str, object]]] = {}

    def run_vertex(self, name: str) -> None:
        vertex = self.plan.vertex(name)
        op = self.ops.get(name)
        if op is None:
            raise EngineError(f"{vertex.processor} is not supported yet")
        inbound = self.plan.inbound(name)
        if self.epoch is not None and inbound and not op.coalesces_itself:
            self.epoch.coalesce(name)
        # An epoch run's aggregate carries state instead of grouping once: count it as usual.
        counts_own_input = op.counts_own_input and len(inbound) == 1 and self.epoch is None
        # An epoch reads its counts at its barrier, without waiting for Spark's listeners.
        counted = self.epoch is None and op.rows_counted_by(vertex.params, None) is not None
        emits = None
        if len(inbound) == 1 and not op.places_own_input and not counted:
            emits = partial(op.emitted_per_item, vertex.params)
        inputs = self.consume_by_priority(
            name, inbound, op.places_own_input, counts_own_input, emits
        )
        context = OpContext(
            spark=self.spark,
            vertex=vertex,
            params=vertex.params,
            inputs=inputs,
            inbound=inbound,
            senders=[self.plan.vertex(e.source) for e in inbound],
            partition_count=self.plan.partition_count,
            results_cap=self.control.results_cap,
            sink_results=self.sink_results,
            keep=self.keep,
            outbound=self.plan.outbound(name),
            receivers=[self.plan.vertex(e.to) for e in self.plan.outbound(name)],
            epoch=self.epoch,
            redis=self.control.redis,
            count_input=self.counters.own_input_counter(name),
            owner=self.control.job_group,
            allowed_modules=self.control.allowed_python_modules,
            metrics_url=self.control.metrics_url,
            metrics_cluster=self.control.metrics_cluster,
            data=self.control.data,
            jdbc=self.control.jdbc,
            kafka=self.control.kafka,
            exactly_once=self.plan.config.processing_guarantee is ProcessingGuarantee.exactly_once,
            max_records=self.plan.config.max_processor_accumulated_records,
            known_input=None if self.epoch is not None else self.counters.known_received(name),
        )
        if vertex.role == "sink" or not context.outbound:  # its actions are its own work
            with vertex_actions(self.spark.sparkContext, name):
                output = op.apply(context)
        else:
            output = op.apply(context)
        if self.epoch is not None and not op.forwards_own_watermarks:
            self.epoch.watermarks.pass_through(name)
        if vertex.role == "sink":
            return
        outbound = self.plan.outbound(name)
        alone = len(outbound) == 1 and ORDINAL not in output.columns  # one edge takes it all
        # One item per item received is what it received, unless an exchange precedes it: its
        # observation then keeps Spark from moving a later filter, with its expressions,
        # before that exchange (its work stays where Jet runs it and its load is measured).
        counted_by = op.rows_counted_by(vertex.params, output) if self.epoch is None else None
        rows = None
        if counted_by is not None:
            rows = self.counters.node_rows(self.spark, output, *counted_by)
        output = self.counters.emitted(
            name,
            without_slot(output),
            at_receiver=alone,
            known=self.known_count(op, context),
            rows=rows,
            as_received=op.preserves_count(context)
            and all(e.exchange is Exchange.fused or e.pregrouped for e in inbound),
        )
        if self.buffers(op, outbound):
            output = self.keep(output)
        self.frames[name] = output
        if not outbound:
            with vertex_actions(self.spark.sparkContext, name):
                output.count()  # a dead end still runs, as its processors would in Jet

    def known_count(self, op: Op, context: OpContext) -> int | None:
        """What a batch vertex emits, when known on the driver (``Op.known_count``, or its
        known input for an op that ``preserves_count``)."""
        if self.epoch is not None:
            return None
        if op.preserves_count(context):
            return context.known_input
        return op.known_count(context)

    def buffers(self, op: Op, outbound: list[EdgePlan]) -> bool:
        """Whether a vertex's output is kept (persisted) for its outbound edges: when one of
        them is ``buffered``, or when a fork must not be computed twice (a Python vertex, an
        epoch's stateful step). Otherwise each edge reads it by recomputing it."""
        if any(edge.buffered for edge in outbound):
            return True
        return len(outbound) > 1 and (self.epoch is not None or not op.recomputable)

    def consume_by_priority(
        self,
        name: str,
        inbound: list[EdgePlan],
        places_own_input: bool,
        counts_own_input: bool = False,
        emits: Callable[[DataFrame], Column | None] | None = None,
    ) -> list[DataFrame]:
        """The routed inbound frames by ordinal; all but the last priority level materialised.

        An op that ``places_own_input`` gets its senders' frames and routes them itself.
        ``emits``: see ``VertexCounters.received``.
        """
        receiver = self.plan.vertex(name)
        routed: dict[int, DataFrame] = {}
        for edge in inbound:
            sender = self.plan.vertex(edge.source)
            whole = self.frames[edge.source]
            frame = self.counters.received(
                name,
                edge.source,
                outbound_frame(whole, edge),
                copies=copies_per_item(edge, receiver),
                partial=ORDINAL in whole.columns,
                counts_own_input=counts_own_input,
                emits=emits,
            )
            if not places_own_input:
                frame = route(frame, edge, sender, receiver, self.plan.partition_count)
            routed[edge.to_ordinal] = frame
        levels = [
            [e.to_ordinal for e in edges]
            for _, edges in groupby(sorted(inbound, key=lambda e: e.priority), lambda e: e.priority)
        ]
        for level in levels[:-1]:
            for ordinal in level:
                routed[ordinal] = self.keep(routed[ordinal])
                routed[ordinal].count()  # consumed in full before the next priority is read
        return [routed[edge.to_ordinal] for edge in inbound]

    def keep(self, frame: DataFrame) -> DataFrame:
        kept = frame.persist(StorageLevel.MEMORY_AND_DISK)
        self.persisted.append(kept)
        return kept

    def release(self) -> None:
        for frame in self.persisted:
            frame.unpersist()


def run_vertices(execution: Execution) -> None:
    """Run every vertex in order; raise ``VertexFailed`` naming a failing vertex."""
    control = execution.control
    for name in execution.plan.order:
        if control.cancelled.is_set():
            raise JobCancelled(f"job {control.job_id} was asked to stop")
        try:
            execution.run_vertex(name)
        except Exception as error:
            if control.cancelled.is_set():
                raise JobCancelled(f"job {control.job_id} was asked to stop") from error
            failed = processor_failure(error)
            if failed is not None:  # a Python processor failed inside a Spark task
                raise VertexFailed(*failed) from error
            raise VertexFailed(name, error) from error
    execution.counters.settle()  # every action has run: the counts known before are true
