"""Processor instances kept from epoch to epoch in a Python worker process (no Spark: the
task function is driven directly, as one Python worker runs one task after another)."""

from __future__ import annotations

from collections.abc import Iterator
from types import GeneratorType
from typing import Any

import pyarrow as pa
import pytest

from jetspark.example_processors.streaming import InstanceCount
from jetspark.processor import Context
from jetspark.processor.runtime.outbox import RuntimeOutbox
from worker.engine.python.arrow_io import (
    EPOCH_FIELDS,
    ITEM,
    KIND,
    STATE,
    STATE_KEY,
    STATE_VALUE,
)
from worker.engine.python.instances import PROCESS_CACHE, InstanceCache, LiveInstance
from worker.engine.python.task import EpochTask, TaskPlan, run_partition

SCHEMA = pa.schema(
    [
        pa.field("seq", pa.int64()),
        pa.field("processor", pa.int32()),
        pa.field("created", pa.int32()),
        pa.field("epochs", pa.int32()),
        *EPOCH_FIELDS,
    ]
)


def plan(run: str, generation: int, expects: int | None, *, final: bool = False) -> TaskPlan:
    return TaskPlan(
        vertex="counted",
        class_spec="jetspark.example_processors.streaming:InstanceCount",
        allowed_modules=("jetspark.example_processors",),
        args={},
        local_parallelism=1,
        parallelism=1,
        outbox_capacities=(1024,),
        queue_sizes={0: 1024},
        input_shape="native",
        inbound_order=(0,),
        schema=SCHEMA,
        tagged=False,
        epoch=EpochTask(
            restore=True,
            watermarks={},
            final=final,
            partition_count=271,
            run=run,
            generation=generation,
            expects=expects,
        ),
    )


class Epochs:
    """Runs epochs of processor 0, carrying the state entries on as the driver does."""

    def __init__(self, run: str) -> None:
        self.run = run
        self.entries: list[tuple[bytes, bytes]] = []

    def input(self, seqs: list[int]) -> Iterator[pa.RecordBatch]:
        keys = [k for k, _ in self.entries] + [None] * len(seqs)
        values = [v for _, v in self.entries] + [None] * len(seqs)
        yield pa.RecordBatch.from_arrays(
            [
                pa.array([None] * len(self.entries) + seqs, pa.int64()),
                pa.array(keys, pa.binary()),
                pa.array(values, pa.binary()),
            ],
            ["seq", STATE_KEY, STATE_VALUE],
        )

    def run_epoch(
        self, generation: int, expects: int | None, seqs: list[int], *, final: bool = False
    ) -> list[dict[str, Any]]:
        task = plan(self.run, generation, expects, final=final)
        out = list(run_partition(task, self.input(seqs)))
        rows = [row for batch in out for row in batch.to_pylist()]
        self.entries = [(r[STATE_KEY], r[STATE_VALUE]) for r in rows if r[KIND] == STATE]
        return [r for r in rows if r[KIND] == ITEM]


def created(rows: list[dict[str, Any]]) -> set[int]:
    return {r["created"] for r in rows}


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    PROCESS_CACHE.entries.clear()
    yield
    PROCESS_CACHE.entries.clear()


def test_the_next_epoch_takes_the_kept_instance_back_without_init_or_restore() -> None:
    epochs = Epochs("run-a")
    assert created(epochs.run_epoch(1, None, [1, 2])) == {1}
    # A restore would add the saved count to the new instance's own: 2.
    rows = epochs.run_epoch(2, 1, [3])
    assert created(rows) == {1} and rows[0]["epochs"] == 1
    assert created(epochs.run_epoch(3, 2, [4])) == {1}


def test_an_instance_of_another_generation_is_not_taken_back() -> None:
    """A re-run of an epoch (or one whose state was rolled back) expects an older state
    than the kept instance holds: the task restores from the entries instead."""
    epochs = Epochs("run-b")
    epochs.run_epoch(1, None, [1])
    first_entries = epochs.entries
    epochs.run_epoch(2, 1, [2])  # the instance now holds epoch 2's state
    epochs.entries = first_entries  # epoch 2 runs again from epoch 1's state
    rows = epochs.run_epoch(2, 1, [2])
    assert created(rows) == {2} and rows[0]["epochs"] == 1


def test_a_new_run_of_the_job_restores_from_the_snapshot() -> None:
    before = Epochs("run-c")
    before.run_epoch(1, None, [1])
    after = Epochs("run-c-restarted")
    after.entries = before.entries
    assert created(after.run_epoch(2, None, [2])) == {2}  # its first epoch: no instance
    assert created(after.run_epoch(3, 2, [3])) == {2}  # from then on, kept


def test_a_task_that_did_not_end_keeps_no_instance() -> None:
    epochs = Epochs("run-d")
    epochs.run_epoch(1, None, [1])
    saved = epochs.entries
    task = run_partition(plan("run-d", 2, 1), epochs.input([2]))
    assert isinstance(task, GeneratorType)
    next(task)  # Spark stops reading (a failure elsewhere, a cancelled stage)
    task.close()
    epochs.entries = saved
    assert created(epochs.run_epoch(2, 1, [2])) == {2}


def test_the_final_epoch_closes_its_instance_and_keeps_none() -> None:
    epochs = Epochs("run-e")
    epochs.run_epoch(1, None, [1])
    assert len(PROCESS_CACHE) == 1
    epochs.run_epoch(2, 1, [2], final=True)
    assert len(PROCESS_CACHE) == 0


class Closing(InstanceCount):
    closed = 0

    def close(self) -> None:
        Closing.closed += 1


def live(generation: int) -> LiveInstance:
    context = Context("v", global_index=0, local_parallelism=1, total_parallelism=1)
    return LiveInstance(Closing(), RuntimeOutbox([1]), context, generation)


def test_stale_idle_and_surplus_instances_are_closed() -> None:
    Closing.closed = 0
    cache = InstanceCache(idle_ttl_s=3600, capacity=2)
    cache.keep(("r", "v", 0), live(1))
    assert cache.take(("r", "v", 0), 2) is None and Closing.closed == 1  # stale
    for g in range(3):
        cache.keep(("r", "v", g), live(1))
    assert len(cache) == 2 and Closing.closed == 2  # the least recently kept went
    assert cache.take(("r", "v", 0), 1) is None
    taken = cache.take(("r", "v", 2), 1)
    assert taken is not None and len(cache) == 1
    idle = InstanceCache(idle_ttl_s=0.0)
    idle.keep(("r", "v", 0), live(1))
    assert idle.take(("r", "v", 0), 1) is None and Closing.closed == 3  # expired


def test_older_instances_of_the_same_run_and_vertex_are_dropped_once_an_epoch_moved_on() -> None:
    """Processor 1's instance of epoch 1 in this process can never be taken back once
    epoch 3 expects epoch 2's state: it goes when processor 0's task takes its own."""
    Closing.closed = 0
    cache = InstanceCache()
    cache.keep(("r", "v", 0), live(2))
    cache.keep(("r", "v", 1), live(1))
    cache.keep(("r", "w", 1), live(1))  # another vertex
    cache.keep(("other", "v", 1), live(1))  # another run
    assert cache.take(("r", "v", 0), 2) is not None
    assert set(cache.entries) == {("r", "w", 1), ("other", "v", 1)}
    assert Closing.closed == 1
