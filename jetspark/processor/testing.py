"""``verify_processor``: Jet's ``TestSupport`` for Python processors.

Runs a processor, built fresh by a factory for every configuration, through the same tasklet
state machine the engine uses, with outbox capacity 1 and larger, inbox batches of one item
and of many, and checks that it

- emits exactly the expected items (ordered, or as a multiset): nothing lost or duplicated
  when the outbox refuses;
- returns when the outbox refuses instead of offering again in the same call (strict outbox);
- makes progress: no long run of calls that neither consume nor emit;
- when cooperative, returns from each call within ``cooperative_timeout_s``;
- keeps its state across a snapshot and restore after every inbox it finished (with inbox
  batches of 1: between items): ``save_to_snapshot`` until True into the snapshot bucket
  (capacity as the outbox), then a fresh instance gets ``restore_from_snapshot`` and
  ``finish_snapshot_restore``, as when Jet restarts a job from a snapshot.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from jetspark.processor.context import Context
from jetspark.processor.inbox import Inbox
from jetspark.processor.processor import Processor
from jetspark.processor.runtime.outbox import RuntimeOutbox
from jetspark.processor.runtime.tasklet import (
    Event,
    Exhausted,
    Items,
    ProcessorFailed,
    ProcessorTasklet,
)

DEFAULT_CAPACITIES = (1, 2048)
DEFAULT_QUEUE_SIZES = (1, 1024)


def verify_processor(
    factory: Callable[[], Processor],
    *,
    inputs: Sequence[Any] | Mapping[int, Sequence[Any]] = (),
    expected: Sequence[Any] | Mapping[int, Sequence[Any]],
    priorities: Mapping[int, int] | None = None,
    outbound_ordinals: int = 1,
    ordered: bool = True,
    args: Mapping[str, Any] | None = None,
    capacities: Sequence[int] = DEFAULT_CAPACITIES,
    queue_sizes: Sequence[int] = DEFAULT_QUEUE_SIZES,
    cooperative_timeout_s: float = 1.0,
    no_progress_limit: int = 100,
    snapshot_restore: bool = True,
) -> None:
    """Raise ``AssertionError`` describing the first configuration the processor fails.

    ``inputs``/``expected`` are a list (ordinal 0) or a mapping ordinal → list. Inbound
    edges are delivered in full in order of ``priorities`` (lower first), then ordinal.
    """
    by_ordinal = _per_ordinal(inputs)
    want = _per_ordinal(expected)
    most = 2 * sum(len(v) for v in want.values()) + 100
    for capacity in capacities:
        for queue_size in queue_sizes:
            setup = f"outbox capacity {capacity}, inbox batches of {queue_size}"
            got = _run_once(
                factory,
                snapshot_restore,
                by_ordinal,
                priorities or {},
                outbound_ordinals,
                args or {},
                capacity,
                queue_size,
                cooperative_timeout_s,
                no_progress_limit,
                most,
                setup,
            )
            for ordinal in range(outbound_ordinals):
                _compare(want.get(ordinal, []), got.get(ordinal, []), ordered, ordinal, setup)


def _per_ordinal(value: Sequence[Any] | Mapping[int, Sequence[Any]]) -> dict[int, list[Any]]:
    if isinstance(value, Mapping):
        return {int(k): list(v) for k, v in value.items()}
    return {0: list(value)} if value else {}


def _events(inputs: dict[int, list[Any]], priorities: Mapping[int, int]) -> Iterator[Event]:
    for ordinal in sorted(inputs, key=lambda o: (priorities.get(o, 0), o)):
        yield Items(ordinal, list(inputs[ordinal]))
        yield Exhausted(ordinal)


def _run_once(
    factory: Callable[[], Processor],
    snapshot_restore: bool,
    inputs: dict[int, list[Any]],
    priorities: Mapping[int, int],
    outbound_ordinals: int,
    args: Mapping[str, Any],
    capacity: int,
    queue_size: int,
    timeout_s: float,
    no_progress_limit: int,
    most: int,
    setup: str,
) -> dict[int, list[Any]]:
    outbox = RuntimeOutbox([capacity] * outbound_ordinals, snapshot_capacity=capacity, strict=True)
    context = Context(
        vertex_name="verified",
        global_index=0,
        local_parallelism=1,
        total_parallelism=1,
        args=args,
        inbound_ordinals=len(inputs),
        outbound_ordinals=outbound_ordinals,
    )
    out: dict[int, list[Any]] = {}
    slow: list[str] = []
    processor = factory()

    def on_call(callback: str, elapsed_ns: int) -> None:
        if tasklet.processor.is_cooperative() and elapsed_ns > timeout_s * 1e9:
            slow.append(f"{callback} took {elapsed_ns / 1e9:.3f}s")

    def on_drain(ordinal: int, items: list[Any]) -> None:
        out.setdefault(ordinal, []).extend(items)
        if sum(len(v) for v in out.values()) > most:
            # A processor that re-emits on every resume would never finish.
            raise AssertionError(f"{setup}: emitted more than {most} items; duplicates?")

    tasklet = ProcessorTasklet(
        processor,
        context,
        outbox,
        _events(inputs, priorities),
        on_drain,
        queue_sizes=dict.fromkeys(inputs, queue_size),
        on_call=on_call,
        no_progress_limit=no_progress_limit,
    )
    try:
        while tasklet.step():
            if snapshot_restore and tasklet.at_item_boundary():
                tasklet.processor = _snapshot_and_restore(tasklet, factory, no_progress_limit)
    except ProcessorFailed as failure:
        raise AssertionError(f"{setup}: {failure}") from failure
    if outbox.violations:
        raise AssertionError(f"{setup}: {outbox.violations[0]} ({len(outbox.violations)} times)")
    if slow:
        raise AssertionError(f"{setup}: a cooperative processor hogged the thread: {slow[0]}")
    return out


def _snapshot_and_restore(
    tasklet: ProcessorTasklet, factory: Callable[[], Processor], limit: int
) -> Processor:
    """Save the state into the snapshot bucket, then restore it into a fresh instance."""
    outbox, old = tasklet.outbox, tasklet.processor
    entries: list[tuple[Any, Any]] = []
    for _ in range(limit * 1000):
        outbox.begin_call()
        done = _guarded(tasklet, "save_to_snapshot", old.save_to_snapshot)
        entries.extend(outbox.take_snapshot())
        tasklet.drain()
        if done:
            break
    else:
        raise AssertionError("save_to_snapshot never returned True")
    restored = factory()
    outbox.begin_call()
    _guarded(tasklet, "init", lambda: restored.init(outbox, tasklet.context))
    inbox = Inbox(entries)
    while not inbox.is_empty():
        before = len(inbox)
        outbox.begin_call()
        _guarded(tasklet, "restore_from_snapshot", lambda: restored.restore_from_snapshot(inbox))
        if len(inbox) == before:
            raise AssertionError("restore_from_snapshot took no entry from its inbox")
    for _ in range(limit):
        outbox.begin_call()
        done = _guarded(tasklet, "finish_snapshot_restore", restored.finish_snapshot_restore)
        tasklet.drain()
        if done:
            return restored
    raise AssertionError("finish_snapshot_restore never returned True")


def _guarded(tasklet: ProcessorTasklet, name: str, callback: Callable[[], Any]) -> Any:
    try:
        return callback()
    except Exception as error:
        context = tasklet.context
        raise ProcessorFailed(context.vertex_name, context.global_index, name, error) from error


def _compare(want: list[Any], got: list[Any], ordered: bool, ordinal: int, setup: str) -> None:
    if not ordered:
        want, got = sorted(want, key=_sort_key), sorted(got, key=_sort_key)
    if want != got:
        lost = [w for w in want if w not in got][:5]
        extra = [g for g in got if g not in want][:5]
        raise AssertionError(
            f"{setup}, ordinal {ordinal}: expected {len(want)} items, got {len(got)}"
            f"; missing {lost}; unexpected {extra}; first items {got[:10]}"
        )


def _sort_key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, default=str)
