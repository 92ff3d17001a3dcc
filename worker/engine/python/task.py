"""What runs inside each Spark task: one processor instance driven by its tasklet.

``run_partition`` is the ``mapInArrow`` function. Processor g of the vertex is the task's
Spark partition g (SPEC §4). The allow-list is checked again here, on the worker.

In an epoch of a streaming job (``TaskPlan.epoch``) the task takes back the processor
instance this Python worker kept from the previous epoch (``instances``), or else creates
one and restores its state from the entries at the head of its input; it offers the
coalesced watermark once the items are processed, saves the state, keeps the instance for
the next epoch, and returns the entries and the watermarks the processor emitted as extra
rows (``arrow_io.EPOCH_FIELDS``).
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from jetspark.dag.partitioning import MURMUR3_SEED, partition_id
from jetspark.processor import Context, Processor
from jetspark.processor.loading import load_processor_class
from jetspark.processor.runtime.outbox import RuntimeOutbox
from jetspark.processor.runtime.tasklet import (
    EpochWork,
    Event,
    ProcessorFailed,
    ProcessorTasklet,
)
from worker.engine.contract import RedisTarget
from worker.engine.python.arrow_io import (
    NUMBER,
    STATE,
    STATE_KEY,
    STATE_VALUE,
    SUMMARY,
    WATERMARKS,
    OutputBatches,
    native_events,
    packed_events,
    source_events,
    split_restore,
)
from worker.engine.python.instances import PROCESS_CACHE, LiveInstance
from worker.engine.python.live import PROCESSORS_KEY, OutputClock, live_report
from worker.engine.python.task_logs import task_logs
from worker.engine.state_columns import PARTITION, PROCESSOR

STATE_BATCH_ROWS = 8_192


@dataclass(frozen=True)
class EpochTask:
    """One epoch of a streaming job, as every task of the vertex sees it."""

    restore: bool
    """The vertex has state: each input starts with its processor's entries."""
    watermarks: Mapping[int, int]
    """Per processor g, the coalesced watermark to offer (only those that rose)."""
    final: bool
    partition_count: int
    run: str = ""
    """This run of the job (new at each start, restart or replay): where instances live."""
    generation: int = 0
    """This epoch: the generation of the state the instances hold after it."""
    expects: int | None = None
    """The generation a kept instance must hold to be taken back (the epoch whose state
    this one restores); None: no instance may be, every task restores (``instances``)."""


@dataclass(frozen=True)
class TaskPlan:
    """Everything a task needs, pickled to the Python workers with the function."""

    vertex: str
    class_spec: str
    allowed_modules: tuple[str, ...]
    args: Mapping[str, Any]
    local_parallelism: int
    parallelism: int
    outbox_capacities: tuple[int, ...]
    queue_sizes: Mapping[int, int]
    input_shape: str
    """``source``, ``native`` (one edge, its own columns) or ``packed`` (several edges)."""
    inbound_order: tuple[int, ...]
    """Inbound ordinals sorted by (priority, ordinal)."""
    schema: pa.Schema
    tagged: bool
    metrics: Any = field(default=None, compare=False)
    """A Spark accumulator that receives each processor's ``TaskletMetrics`` as a dict."""
    metrics_url: str | None = None
    """Redis for live processor reports (``live.py``); None: no live reports."""
    metrics_cluster: bool = False
    """``metrics_url`` names a node of a Redis Cluster."""
    epoch: EpochTask | None = None
    """Set in an epoch run (a streaming job)."""
    redis: RedisTarget | None = None
    """The job's Redis: where the task's own log lines go when its job keeps them
    (``task_logs.TASK_LOGS_KEY``)."""


def run_partition(plan: TaskPlan, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    from pyspark import TaskContext

    task = TaskContext.get()
    index = task.partitionId() if task is not None else 0
    with task_logs(plan.redis, plan.vertex, index):
        if plan.epoch is not None:
            yield from _run_epoch(plan, plan.epoch, index, batches)
        else:
            yield from _run_batch(plan, task, index, batches)


def _run_batch(
    plan: TaskPlan, task: Any, index: int, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    processor = _create(plan, index)
    context = _context(plan, index)
    output = OutputBatches(plan.schema, plan.tagged)
    tasklet = ProcessorTasklet(
        processor,
        context,
        RuntimeOutbox(plan.outbox_capacities),
        _events(plan, batches),
        output.add,
        queue_sizes=plan.queue_sizes,
    )
    clock = OutputClock()
    report = live_report(
        tasklet,
        clock,
        url=plan.metrics_url,
        cluster=plan.metrics_cluster,
        key=task.getLocalProperty(PROCESSORS_KEY) if task is not None else None,
        member=index // max(1, plan.local_parallelism),
        queue_capacity=sum(plan.queue_sizes.values()),
    )
    try:
        while tasklet.step():
            if output.full():
                yield from clock.handed(output.flush())
        yield from clock.handed(output.flush())
    finally:
        report.stop()
    if plan.metrics is not None:
        plan.metrics.add({f"{plan.vertex}/{index}": tasklet.metrics.as_dict()})


def _context(plan: TaskPlan, index: int) -> Context:
    return Context(
        vertex_name=plan.vertex,
        global_index=index,
        local_parallelism=plan.local_parallelism,
        total_parallelism=plan.parallelism,
        args=plan.args,
        inbound_ordinals=len(plan.inbound_order),
        outbound_ordinals=len(plan.outbox_capacities),
    )


def _run_epoch(
    plan: TaskPlan, epoch: EpochTask, index: int, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    pickled: list[tuple[bytes, bytes]] = []
    if epoch.restore:  # sent to every task: a miss below restores from them
        pickled, batches = split_restore(batches)
    key = (epoch.run, plan.vertex, index)
    live = PROCESS_CACHE.take(key, epoch.expects)
    restore: list[tuple[Any, Any]] | None = None
    if live is None:
        live = LiveInstance(
            _create(plan, index), RuntimeOutbox(plan.outbox_capacities), _context(plan, index), -1
        )
        if epoch.restore:
            restore = [(pickle.loads(k), pickle.loads(v)) for k, v in pickled]
        created = True
    else:
        live.outbox.refusals, live.outbox.first_refusal_ns = 0, None  # counted per epoch
        created = False
    output = OutputBatches(plan.schema, plan.tagged, epoch=True)
    saved: list[tuple[Any, Any]] = []
    marks = WatermarkReport()
    tasklet = ProcessorTasklet(
        live.processor,
        live.context,
        live.outbox,
        _events(plan, batches, exhaust=epoch.final),
        output.add,
        queue_sizes=plan.queue_sizes,
        epoch=EpochWork(restore, epoch.watermarks.get(index), epoch.final, keep=not epoch.final),
        on_snapshot=saved.extend,
        on_watermarks=marks.add,
        initialised=not created,
    )
    while tasklet.step():
        if output.full():
            yield from output.flush()
    yield from output.flush()
    for first in range(0, len(saved), STATE_BATCH_ROWS):
        chunk = saved[first : first + STATE_BATCH_ROWS]
        yield output.internal_batch(
            STATE,
            {
                PROCESSOR: [index] * len(chunk),
                PARTITION: [entry_partition(k, index, epoch.partition_count) for k, _ in chunk],
                STATE_KEY: [pickle.dumps(k) for k, _ in chunk],
                STATE_VALUE: [pickle.dumps(v) for _, v in chunk],
            },
            len(chunk),
        )
    reported = marks.reported
    if reported:
        yield output.internal_batch(
            WATERMARKS,
            {
                PROCESSOR: [index] * len(reported),
                PARTITION: list(range(len(reported))),
                NUMBER: reported,
            },
            len(reported),
        )
    yield output.internal_batch(SUMMARY, {PROCESSOR: [index], NUMBER: [len(saved)]}, 1)
    if plan.metrics is not None:
        plan.metrics.add({f"{plan.vertex}/{index}": tasklet.metrics.as_dict()})
    if not epoch.final:  # reached only when Spark took every batch: the task succeeded
        live.generation = epoch.generation
        PROCESS_CACHE.keep(key, live)


def entry_partition(key: Any, processor: int, partition_count: int) -> int:
    """The Jet partition of a snapshot entry's key (SPEC §4, as items are routed), so the
    entry follows its key when the parallelism changes; ``processor`` for a None key."""
    if key is None:
        return processor
    try:
        return partition_id(key, partition_count)
    except (TypeError, ValueError):  # not JSON-able: a stable hash of its pickle
        digest = hashlib.blake2b(pickle.dumps(key), digest_size=8, key=bytes([MURMUR3_SEED]))
        return int.from_bytes(digest.digest(), "little") % partition_count


class WatermarkReport:
    """The watermarks a processor emitted in one epoch, cut to what the driver must replay
    to check them: the first, then the last (or the first that did not increase)."""

    def __init__(self) -> None:
        self.reported: list[int] = []
        self.broken = False

    def add(self, marks: list[int]) -> None:
        reported = self.reported
        for wm in marks:
            if self.broken:
                return
            if len(reported) == 1 and wm > reported[0]:
                reported.append(wm)
            elif len(reported) == 2 and wm > reported[1]:
                reported[1] = wm
            else:
                reported.append(wm)
                self.broken = len(reported) > 1


def _create(plan: TaskPlan, index: int) -> Processor:
    try:
        return load_processor_class(plan.class_spec, plan.allowed_modules)()
    except Exception as error:
        raise ProcessorFailed(plan.vertex, index, "create", error) from error


def _events(
    plan: TaskPlan, batches: Iterator[pa.RecordBatch], exhaust: bool = True
) -> Iterator[Event]:
    if plan.input_shape == "source":
        return source_events(batches)
    if plan.input_shape == "native":
        return native_events(batches, exhaust)
    return packed_events(batches, plan.inbound_order, exhaust)
