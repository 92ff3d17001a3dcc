"""What runs inside each Spark task: one processor instance driven by its tasklet.

``run_partition`` is the ``mapInArrow`` function. Processor g of the vertex is the task's
Spark partition g (SPEC §4). The allow-list is checked again here, on the worker.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from jetspark.processor import Context, Outbox, Processor
from jetspark.processor.loading import load_processor_class
from jetspark.processor.runtime.tasklet import Event, ProcessorFailed, ProcessorTasklet
from worker.engine.python.arrow_io import (
    OutputBatches,
    native_events,
    packed_events,
    source_events,
)
from worker.engine.python.live import PROCESSORS_KEY, OutputClock, live_report


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


def run_partition(plan: TaskPlan, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    from pyspark import TaskContext

    task = TaskContext.get()
    index = task.partitionId() if task is not None else 0
    processor = _create(plan, index)
    context = Context(
        vertex_name=plan.vertex,
        global_index=index,
        local_parallelism=plan.local_parallelism,
        total_parallelism=plan.parallelism,
        args=plan.args,
        inbound_ordinals=len(plan.inbound_order),
        outbound_ordinals=len(plan.outbox_capacities),
    )
    output = OutputBatches(plan.schema, plan.tagged)
    tasklet = ProcessorTasklet(
        processor,
        context,
        Outbox(plan.outbox_capacities),
        _events(plan, batches),
        output.add,
        queue_sizes=plan.queue_sizes,
    )
    clock = OutputClock()
    report = live_report(
        tasklet,
        clock,
        url=plan.metrics_url,
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


def _create(plan: TaskPlan, index: int) -> Processor:
    try:
        return load_processor_class(plan.class_spec, plan.allowed_modules)()
    except Exception as error:
        raise ProcessorFailed(plan.vertex, index, "create", error) from error


def _events(plan: TaskPlan, batches: Iterator[pa.RecordBatch]) -> Iterator[Event]:
    if plan.input_shape == "source":
        return source_events(batches)
    if plan.input_shape == "native":
        return native_events(batches)
    return packed_events(batches, plan.inbound_order)
