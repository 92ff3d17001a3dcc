"""The tasklet in an epoch of a streaming job: restore first, watermark after the items,
``complete()`` only in the final epoch, the snapshot last; and the task's helpers."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from jetspark.processor import Context, Inbox, Outbox
from jetspark.processor.runtime.outbox import RuntimeOutbox
from jetspark.processor.runtime.tasklet import EpochWork, Items, ProcessorTasklet, State
from tests.processor.test_tasklet import Recorder
from worker.engine.python.arrow_io import STATE_KEY, STATE_VALUE, native_events, split_restore
from worker.engine.python.task import WatermarkReport, entry_partition


class Stateful(Recorder):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def init(self, outbox: Outbox, context: Context) -> None:
        super().init(outbox, context)
        self.calls.append("init")

    def restore_from_snapshot(self, inbox: Inbox) -> None:
        entry = inbox.poll()  # one entry per call: called again until all are taken
        self.calls.append(f"restore({entry})")
        self.seen.append(entry)

    def finish_snapshot_restore(self) -> bool:
        self.calls.append("finish_snapshot_restore")
        return True

    def try_process_watermark(self, watermark: int) -> bool:
        self.calls.append(f"watermark({watermark})")
        return super().try_process_watermark(watermark)

    def save_to_snapshot(self) -> bool:
        self.calls.append("save_to_snapshot")
        return self.outbox.offer_to_snapshot("k", len(self.seen))


def run_epoch(processor: Recorder, events: list[Any], work: EpochWork) -> dict[str, list[Any]]:
    got: dict[str, list[Any]] = {"items": [], "snapshot": [], "watermarks": []}
    context = Context("v", global_index=0, local_parallelism=1, total_parallelism=1)
    tasklet = ProcessorTasklet(
        processor,
        context,
        RuntimeOutbox([4]),
        iter(events),
        lambda o, items: got["items"].extend(items),
        epoch=work,
        on_snapshot=got["snapshot"].extend,
        on_watermarks=got["watermarks"].extend,
    )
    tasklet.run()
    assert tasklet.state is State.DONE
    return got


def test_an_epoch_restores_first_offers_the_watermark_after_the_items_and_saves_last() -> None:
    processor = Stateful()
    work = EpochWork(restore=[("a", 1), ("b", 2)], watermark=500, final=False)
    got = run_epoch(processor, [Items(0, ["x"])], work)
    assert processor.calls == [
        "init",
        "restore(('a', 1))",
        "restore(('b', 2))",
        "finish_snapshot_restore",
        "try_process",
        "process(0, ['x'])",
        "try_process",  # also called when the inbox is empty: a lull
        "watermark(500)",
        "save_to_snapshot",  # not exhausted, no complete(): the stream goes on
        "close",
    ]
    assert got == {"items": [], "snapshot": [("k", 2)], "watermarks": [500]}


def test_the_final_epoch_completes_before_the_snapshot_and_an_empty_one_still_calls() -> None:
    processor = Stateful()
    got = run_epoch(processor, [], EpochWork(restore=[], watermark=None, final=True))
    assert processor.calls == [
        "init",
        "finish_snapshot_restore",  # the vertex has state, this processor none
        "try_process",
        "complete",
        "save_to_snapshot",
        "close",
    ]
    assert got["snapshot"] == [("k", 0)] and got["watermarks"] == []


def test_a_watermark_is_refused_while_a_bucket_is_full() -> None:
    outbox = RuntimeOutbox([1, 2])
    assert outbox.offer(0, "item")
    assert not outbox.offer_watermark(7)
    outbox.take(0)
    assert outbox.offer_watermark(7) and outbox.take_watermarks() == [7]


@pytest.mark.parametrize(
    ("emitted", "reported"),
    [
        ([5], [5]),
        ([5, 7, 9], [5, 9]),
        ([5, 7, 9, 3, 11], [5, 9, 3]),
        ([5, 5], [5, 5]),
        ([], []),
    ],
)
def test_the_watermark_report_keeps_what_the_driver_must_check(
    emitted: list[int], reported: list[int]
) -> None:
    report = WatermarkReport()
    for wm in emitted:
        report.add([wm])
    assert report.reported == reported


def test_entries_at_the_head_of_the_input_are_split_from_the_items() -> None:
    keys = pa.array([b"k1", b"k2", None, None], pa.binary())
    values = pa.array([b"v1", b"v2", None, None], pa.binary())
    first = pa.RecordBatch.from_arrays(
        [pa.array([None, None, 1, 2], pa.int64()), keys, values], ["seq", STATE_KEY, STATE_VALUE]
    )
    second = pa.RecordBatch.from_arrays(
        [pa.array([3], pa.int64()), pa.nulls(1, pa.binary()), pa.nulls(1, pa.binary())],
        ["seq", STATE_KEY, STATE_VALUE],
    )
    entries, rest = split_restore(iter([first, second]))
    assert entries == [(b"k1", b"v1"), (b"k2", b"v2")]
    events = list(native_events(rest, exhaust=False))
    assert events == [Items(0, [{"seq": 1}, {"seq": 2}]), Items(0, [{"seq": 3}])]


def test_an_entry_goes_to_its_keys_partition() -> None:
    from jetspark.dag.partitioning import partition_id

    assert entry_partition("word", 3, 271) == partition_id("word", 271)
    assert entry_partition(42, 3, 271) == partition_id(42, 271)
    assert entry_partition(None, 3, 271) == 3
    assert 0 <= entry_partition(b"\x00bytes", 3, 271) < 271
