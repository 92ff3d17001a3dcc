"""Jet's ``ProcessorTasklet``: an explicit state machine around one processor.

Each state names the callback it keeps calling until that callback says it is done:

    PROCESS_INBOX  process(ordinal, inbox) while the inbox has items, else try_process()
    COMPLETE_EDGE  complete_edge(ordinal) once an inbound edge is exhausted
    COMPLETE       complete() once every inbound edge is exhausted
    CLOSE          close(), then DONE

After every call the outbox is drained (``on_drain``), so a bucket refuses items only when a
single call filled it to its edge's capacity.

In one epoch of a streaming job (``EpochWork``) the tasklet also restores and saves state and
passes the coalesced watermark on:

    RESTORE         restore_from_snapshot(inbox of (key, value)) until the entries are taken
    FINISH_RESTORE  finish_snapshot_restore(), before any item
    PROCESS_INBOX   as above; an edge is exhausted (complete_edge) only in the final epoch
    WATERMARK       try_process_watermark(wm) once the epoch's items are processed
    COMPLETE        complete(), in the final epoch only
    SNAPSHOT        save_to_snapshot(), the snapshot bucket drained into ``on_snapshot``
    CLOSE           close(), then DONE; skipped (DONE at once) when the instance is kept
                    for the next epoch (``EpochWork.keep``)

A processor kept from an earlier epoch (``initialised=True``) is not initialised again.
"""

from __future__ import annotations

import contextlib
import json
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from jetspark.processor.context import Context
from jetspark.processor.inbox import Inbox
from jetspark.processor.processor import Processor
from jetspark.processor.runtime.metrics import TaskletMetrics
from jetspark.processor.runtime.outbox import RuntimeOutbox

FAILURE_MARKER = "[jetspark-processor-failed]"
TRACEBACK_CHARS = 4000
"""The end of a failed processor's traceback kept in ``ProcessorFailed``'s message."""
NO_PROGRESS_LIMIT = 100_000
COOPERATIVE_BUDGET_NS = 1_000_000_000
"""How long one callback of a cooperative processor may take (``verify_processor``'s bound):
a longer call blocked, and is counted in ``TaskletMetrics.overruns``."""


@dataclass(frozen=True)
class Items:
    """Items that arrived over the inbound edge at ``ordinal``."""

    ordinal: int
    items: list[Any]


@dataclass(frozen=True)
class Exhausted:
    """The inbound edge at ``ordinal`` will deliver nothing more."""

    ordinal: int


Event = Items | Exhausted


@dataclass(frozen=True)
class EpochWork:
    """What one processor does in an epoch of a streaming job beyond its items."""

    restore: list[tuple[Any, Any]] | None = None
    """The processor's saved entries to restore first; None when the vertex has no state."""
    watermark: int | None = None
    """The coalesced watermark to offer once the inbox is processed (None: it did not rise)."""
    final: bool = False
    """The stream ends with this epoch: ``complete()`` is called before the snapshot."""
    keep: bool = False
    """The instance lives on into the next epoch: ``close()`` is not called after the
    snapshot (only if a callback fails)."""


class State(StrEnum):
    RESTORE = "restore_from_snapshot"
    FINISH_RESTORE = "finish_snapshot_restore"
    PROCESS_INBOX = "process"
    WATERMARK = "try_process_watermark"
    COMPLETE_EDGE = "complete_edge"
    COMPLETE = "complete"
    SNAPSHOT = "save_to_snapshot"
    CLOSE = "close"
    DONE = "done"


class ProcessorFailed(Exception):
    """A processor callback raised; the message names vertex, processor, error type and text.

    The message carries a JSON marker so the driver can recover the facts from a Spark
    ``PythonException``, whose text is the worker's traceback, and on the lines after it the
    processor's own traceback (Spark reports this exception's, not its cause's): the job's
    log shows where in the processor it failed.
    """

    def __init__(self, vertex: str, index: int, callback: str, error: BaseException) -> None:
        self.vertex, self.index, self.callback = vertex, index, callback
        self.error_type = type(error).__name__
        self.error_message = str(error)
        facts = {"vertex": vertex, "type": self.error_type, "message": self.error_message}
        where = "".join(traceback.format_exception(error))[-TRACEBACK_CHARS:]
        super().__init__(
            f"vertex {vertex!r} processor {index} failed in {callback}: "
            f"{self.error_type}: {self.error_message} {FAILURE_MARKER} {json.dumps(facts)}"
            f"\nProcessor traceback:\n{where}"
        )


class NoProgress(RuntimeError):
    """A processor was called many times in a row without consuming or emitting anything."""


class ProcessorTasklet:
    """Runs one processor over a stream of inbound events; call ``step()`` until False."""

    def __init__(
        self,
        processor: Processor,
        context: Context,
        outbox: RuntimeOutbox,
        events: Iterator[Event],
        on_drain: Callable[[int, list[Any]], None],
        *,
        queue_sizes: Mapping[int, int] | None = None,
        on_call: Callable[[str, int], None] | None = None,
        no_progress_limit: int = NO_PROGRESS_LIMIT,
        epoch: EpochWork | None = None,
        on_snapshot: Callable[[list[tuple[Any, Any]]], None] | None = None,
        on_watermarks: Callable[[list[int]], None] | None = None,
        initialised: bool = False,
        cooperative_budget_ns: int = COOPERATIVE_BUDGET_NS,
    ) -> None:
        self.processor, self.context, self.outbox = processor, context, outbox
        self.events = events
        self.on_drain = on_drain
        self.on_call = on_call
        self.queue_sizes = dict(queue_sizes or {})
        self.state = State.PROCESS_INBOX
        self.inboxes: dict[int, Inbox] = {}
        self.ordinal = 0
        """The ordinal of the inbox being processed, or of the edge being completed."""
        self.pending: list[Any] = []
        self.metrics = TaskletMetrics(context.vertex_name, context.global_index)
        self.idle_calls = 0
        self.no_progress_limit = no_progress_limit
        self.last_call = ""
        self._initialised = initialised
        """``init`` was called (on a processor kept from an earlier epoch, before this)."""
        if initialised:
            self.metrics.cooperative = bool(processor.is_cooperative())
        self.epoch = epoch
        self.on_snapshot = on_snapshot
        self.on_watermarks = on_watermarks
        self.cooperative_budget_ns = cooperative_budget_ns
        self._restoring = Inbox()
        if epoch is not None and epoch.restore is not None:
            self._restoring = Inbox(list(epoch.restore))
            self.state = State.RESTORE

    def step(self) -> bool:
        """One callback call and a drain; False once the tasklet is DONE."""
        try:
            if not self._initialised:
                self._initialised = True
                self._call("init", lambda: self.processor.init(self.outbox, self.context))
                self.metrics.cooperative = bool(self.processor.is_cooperative())
            handler = _HANDLERS[self.state]
            handler(self)
        except ProcessorFailed:
            self._close_quietly()
            raise
        return self.state is not State.DONE

    def run(self) -> TaskletMetrics:
        while self.step():
            pass
        return self.metrics

    # -- states ---------------------------------------------------------------------------
    def _process_inbox(self) -> None:
        inbox = self.inboxes.get(self.ordinal)
        if inbox is not None and not inbox.is_empty():
            before = len(inbox)
            self._call("process", lambda: self.processor.process(self.ordinal, inbox))
            taken = before - len(inbox)
            counts = self.metrics.items_in
            counts[self.ordinal] = counts.get(self.ordinal, 0) + taken
            self._progress(taken > 0)
            if inbox.is_empty() and self.pending:
                self._fill(self.ordinal, self.pending)
            return
        if not self._call("try_process", self.processor.try_process):
            self._progress(False)
            return
        self._next_event()

    def _next_event(self) -> None:
        event = next(self.events, None)
        if event is None:
            self.state = State.COMPLETE if self.epoch is None else self._after_epoch_input()
        elif isinstance(event, Exhausted):
            self.ordinal = event.ordinal
            self.state = State.COMPLETE_EDGE
        elif event.items:
            self._fill(event.ordinal, event.items)

    def _fill(self, ordinal: int, items: list[Any]) -> None:
        size = self.queue_sizes.get(ordinal, len(items))
        batch, self.pending = (items, []) if len(items) <= size else (items[:size], items[size:])
        inbox = self.inboxes.setdefault(ordinal, Inbox())
        inbox._refill(batch)
        self.ordinal = ordinal

    def _complete_edge(self) -> None:
        ordinal = self.ordinal
        if self._call("complete_edge", lambda: self.processor.complete_edge(ordinal)):
            self.state = State.PROCESS_INBOX
        else:
            self._progress(False)

    def _complete(self) -> None:
        if self._call("complete", self.processor.complete):
            self.state = State.CLOSE if self.epoch is None else State.SNAPSHOT
        else:
            self._progress(False)

    # -- epoch states (streaming jobs) ----------------------------------------------------
    def _restore(self) -> None:
        inbox = self._restoring
        if inbox.is_empty():
            self.state = State.FINISH_RESTORE
            return
        before = len(inbox)
        self._call("restore_from_snapshot", lambda: self.processor.restore_from_snapshot(inbox))
        self._progress(len(inbox) < before)

    def _finish_restore(self) -> None:
        if self._call("finish_snapshot_restore", self.processor.finish_snapshot_restore):
            self.state = State.PROCESS_INBOX
        else:
            self._progress(False)

    def _after_epoch_input(self) -> State:
        assert self.epoch is not None
        if self.epoch.watermark is not None:
            return State.WATERMARK
        return State.COMPLETE if self.epoch.final else State.SNAPSHOT

    def _watermark(self) -> None:
        assert self.epoch is not None and self.epoch.watermark is not None
        wm = self.epoch.watermark
        if self._call("try_process_watermark", lambda: self.processor.try_process_watermark(wm)):
            self.state = State.COMPLETE if self.epoch.final else State.SNAPSHOT
        else:
            self._progress(False)

    def _snapshot(self) -> None:
        done = self._call("save_to_snapshot", self.processor.save_to_snapshot)
        entries = self.outbox.take_snapshot()
        if entries and self.on_snapshot is not None:
            self.on_snapshot(entries)
        if done:
            kept = self.epoch is not None and self.epoch.keep
            self.state = State.DONE if kept else State.CLOSE
        else:
            self._progress(bool(entries))

    def _close(self) -> None:
        self._call("close", self.processor.close)
        self.state = State.DONE

    # -- plumbing -------------------------------------------------------------------------
    def at_item_boundary(self) -> bool:
        """Whether the last call was ``process`` and left no unprocessed item behind."""
        inbox = self.inboxes.get(self.ordinal)
        return (
            self.last_call == "process" and not self.pending and (inbox is None or inbox.is_empty())
        )

    def _call(self, name: str, callback: Callable[[], Any]) -> Any:
        self.last_call = name
        self.outbox.begin_call()
        started = time.perf_counter_ns()
        try:
            result = callback()
        except Exception as error:
            raise ProcessorFailed(
                self.context.vertex_name, self.context.global_index, name, error
            ) from error
        elapsed = time.perf_counter_ns() - started
        self.metrics.calls += 1
        self.metrics.busy_ns += elapsed
        if elapsed > self.cooperative_budget_ns and self.metrics.cooperative and name != "init":
            self.metrics.overruns += 1  # a cooperative processor blocked (``is_cooperative``)
        if self.on_call is not None:
            self.on_call(name, elapsed)
        self.drain()
        return result

    def drain(self) -> None:
        outbox = self.outbox
        emitted = False
        for ordinal, bucket in enumerate(outbox.buckets):
            if bucket:
                emitted = True
                items = outbox.take(ordinal)
                counts = self.metrics.items_out
                counts[ordinal] = counts.get(ordinal, 0) + len(items)
                self.on_drain(ordinal, items)
        if outbox.watermarks:
            emitted = True
            marks = outbox.take_watermarks()
            if self.on_watermarks is not None:  # batch jobs have no watermarks
                self.on_watermarks(marks)
        if emitted:
            self.idle_calls = 0
        if outbox.first_refusal_ns is not None:
            self.metrics.blocked_ns += time.perf_counter_ns() - outbox.first_refusal_ns
            outbox.first_refusal_ns = None
        self.metrics.refusals = outbox.refusals

    def _progress(self, made: bool) -> None:
        """Count calls that neither consumed nor emitted; too many in a row is a bug."""
        if made:
            self.idle_calls = 0
            return
        self.idle_calls += 1
        if self.idle_calls > self.no_progress_limit:
            error = NoProgress(
                f"{self.state.value} was called {self.no_progress_limit} times in a row "
                "without consuming or emitting anything"
            )
            raise ProcessorFailed(
                self.context.vertex_name, self.context.global_index, self.state.value, error
            )

    def _close_quietly(self) -> None:
        if self.state is not State.DONE:
            self.state = State.DONE
            with contextlib.suppress(Exception):  # the first failure is the one to report
                self.processor.close()


_HANDLERS: dict[State, Callable[[ProcessorTasklet], None]] = {
    State.RESTORE: ProcessorTasklet._restore,
    State.FINISH_RESTORE: ProcessorTasklet._finish_restore,
    State.PROCESS_INBOX: ProcessorTasklet._process_inbox,
    State.WATERMARK: ProcessorTasklet._watermark,
    State.SNAPSHOT: ProcessorTasklet._snapshot,
    State.COMPLETE_EDGE: ProcessorTasklet._complete_edge,
    State.COMPLETE: ProcessorTasklet._complete,
    State.CLOSE: ProcessorTasklet._close,
}
