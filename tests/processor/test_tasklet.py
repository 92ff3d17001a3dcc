"""The tasklet state machine calls the callbacks in Jet's order and closes after a failure."""

from __future__ import annotations

import time
from typing import Any

import pytest

from jetspark.processor import Context, Inbox, Processor
from jetspark.processor.runtime.outbox import RuntimeOutbox
from jetspark.processor.runtime.tasklet import (
    Exhausted,
    Items,
    ProcessorFailed,
    ProcessorTasklet,
    State,
)


class Recorder(Processor):
    output_schema = "v string"

    def __init__(self, fail_on: Any = None) -> None:
        self.calls: list[str] = []
        self.fail_on = fail_on

    def process(self, ordinal: int, inbox: Inbox) -> None:
        items: list[Any] = []
        inbox.drain(items.append)
        if self.fail_on in items:
            raise KeyError(self.fail_on)
        self.calls.append(f"process({ordinal}, {items})")

    def try_process(self) -> bool:
        self.calls.append("try_process")
        return True

    def complete_edge(self, ordinal: int) -> bool:
        self.calls.append(f"complete_edge({ordinal})")
        return True

    def complete(self) -> bool:
        self.calls.append("complete")
        return True

    def close(self) -> None:
        self.calls.append("close")


def run(processor: Recorder, events: list[Any]) -> ProcessorTasklet:
    context = Context("v", global_index=3, local_parallelism=2, total_parallelism=4)
    tasklet = ProcessorTasklet(
        processor, context, RuntimeOutbox([4]), iter(events), lambda o, i: None, queue_sizes={0: 2}
    )
    tasklet.run()
    return tasklet


def test_callbacks_follow_process_complete_edge_complete_close() -> None:
    processor = Recorder()
    events = [Items(0, ["a", "b", "c"]), Exhausted(0), Items(1, ["x"]), Exhausted(1)]
    tasklet = run(processor, events)
    assert processor.calls == [
        "try_process",
        "process(0, ['a', 'b'])",  # inbox batches of at most queue_size
        "process(0, ['c'])",
        "try_process",
        "complete_edge(0)",
        "try_process",
        "process(1, ['x'])",
        "try_process",
        "complete_edge(1)",
        "try_process",
        "complete",
        "close",
    ]
    assert tasklet.state is State.DONE
    assert tasklet.metrics.items_in == {0: 3, 1: 1}
    assert (processor.context.member, processor.context.local_index) == (1, 1)


def test_a_failing_callback_is_reported_with_vertex_and_type_and_close_still_runs() -> None:
    processor = Recorder(fail_on="b")
    with pytest.raises(ProcessorFailed) as failure:
        run(processor, [Items(0, ["a", "b"]), Exhausted(0)])
    assert failure.value.error_type == "KeyError" and failure.value.vertex == "v"
    assert "vertex 'v' processor 3 failed in process: KeyError" in str(failure.value)
    assert processor.calls[-1] == "close"


class Busy(Processor):
    """Spins (as a blocking call would hold its thread) for ``spin_ns`` in each ``process``."""

    output_schema = "v string"

    def __init__(self, cooperative: bool, spin_ns: int) -> None:
        self.cooperative, self.spin_ns = cooperative, spin_ns

    def is_cooperative(self) -> bool:
        return self.cooperative

    def process(self, ordinal: int, inbox: Inbox) -> None:
        inbox.drain(lambda item: None)
        until = time.perf_counter_ns() + self.spin_ns
        while time.perf_counter_ns() < until:
            pass


@pytest.mark.parametrize("cooperative", [True, False])
def test_a_cooperative_processor_that_blocks_is_counted_as_overrunning(cooperative: bool) -> None:
    context = Context("v", global_index=0, local_parallelism=1, total_parallelism=1)
    events: list[Items | Exhausted] = [Items(0, ["a"]), Items(0, ["b"]), Exhausted(0)]
    budget = 2_000_000  # 2 ms per call; each process() spins 10 ms
    tasklet = ProcessorTasklet(
        Busy(cooperative, 10_000_000), context, RuntimeOutbox([4]), iter(events), lambda o, i: None,
        cooperative_budget_ns=budget,
    )  # fmt: skip
    metrics = tasklet.run()
    assert metrics.cooperative is cooperative
    # Non-cooperative processors may block (they have a thread of their own, as in Jet).
    # Each blocking process() overruns; on a loaded machine another call may too.
    assert metrics.overruns >= 2 if cooperative else metrics.overruns == 0
