"""Jet's ``AbstractProcessor``: per-item hooks, ``try_emit`` and a resumable flat-mapper."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from jetspark.processor.inbox import Inbox
from jetspark.processor.outbox import ALL
from jetspark.processor.processor import Processor


class AbstractProcessor(Processor):
    """Implement ``try_process0(item)`` (or ``try_process_item(ordinal, item)``).

    A hook returns True when it has fully handled the item, which is then removed from the
    inbox; False leaves it there and ends the call, so the hook sees the same item again.
    """

    _snapshot_pending: tuple[list[tuple[Any, Any]], list[int]] | None = None

    def process(self, ordinal: int, inbox: Inbox) -> None:
        handle: Callable[[Any], bool]
        if ordinal == 0:
            handle = self.try_process0
        else:

            def handle(item: Any) -> bool:
                return self.try_process_item(ordinal, item)

        inbox.drain_while(handle)

    def try_process0(self, item: Any) -> bool:
        return self.try_process_item(0, item)

    def try_process_item(self, ordinal: int, item: Any) -> bool:
        raise NotImplementedError(f"{type(self).__name__} does not handle ordinal {ordinal}")

    def try_emit(self, item: Any) -> bool:
        """Offer to every outbound ordinal, all or nothing."""
        return self.outbox.offer(ALL, item)

    def try_emit_to(self, ordinal: int, item: Any) -> bool:
        return self.outbox.offer(ordinal, item)

    def try_emit_watermark(self, watermark: int) -> bool:
        """Emit a watermark on every outbound edge; False while a bucket is full."""
        return self.outbox.offer_watermark(watermark)

    def try_save_entries(self, entries: Callable[[], list[tuple[Any, Any]]]) -> bool:
        """For ``save_to_snapshot``: offer ``entries()`` to the snapshot bucket across calls.

        ``entries`` is called once per snapshot; True once every entry was accepted.
        """
        pending = self._snapshot_pending
        if pending is None:
            pending = self._snapshot_pending = (entries(), [0])
        items, position = pending
        while position[0] < len(items):
            key, value = items[position[0]]
            if not self.outbox.offer_to_snapshot(key, value):
                return False
            position[0] += 1
        self._snapshot_pending = None
        return True

    def flat_mapper(self, mapper: Callable[[Any], Iterable[Any]], ordinal: int = ALL) -> FlatMapper:
        """A helper emitting ``mapper(item)``'s outputs and resuming where the outbox refused."""
        return FlatMapper(self, mapper, ordinal)


class FlatMapper:
    """Jet's ``FlatMapper``: emits all outputs of one input item across several calls.

    ``try_process(item)`` returns True once every output of ``item`` was accepted; until then
    it keeps the pending outputs and continues from the first refused one.
    """

    __slots__ = ("_ends", "_index", "_mapper", "_ordinal", "_outputs", "_processor", "_removed")

    def __init__(
        self, processor: Processor, mapper: Callable[[Any], Iterable[Any]], ordinal: int = ALL
    ) -> None:
        self._processor = processor
        self._mapper = mapper
        self._ordinal = ordinal
        self._outputs: Sequence[Any] | None = None
        self._index = 0
        self._ends: list[int] = []
        self._removed = 0

    def try_process(self, item: Any) -> bool:
        outputs = self._outputs
        if outputs is None:
            produced = self._mapper(item)
            outputs = produced if isinstance(produced, list | tuple) else list(produced)
            self._index = 0
        self._index = self._processor.outbox.offer_batch(self._ordinal, outputs, self._index)
        if self._index < len(outputs):
            self._outputs = outputs
            return False
        self._outputs = None
        return True

    def process_inbox(self, inbox: Inbox) -> None:
        """Flat-map the whole inbox, removing each item once all its outputs were accepted.

        The same contract as calling ``try_process`` per item, but the outputs of the inbox's
        items are offered as one run: use it from ``process(ordinal, inbox)`` on hot paths.
        Do not mix it with ``try_process`` on the same mapper.
        """
        outbox, mapper, ordinal = self._processor.outbox, self._mapper, self._ordinal
        while True:
            outputs = self._outputs
            if outputs is None:
                if inbox.is_empty():
                    return
                run: list[Any] = []
                ends = []
                for item in inbox:
                    run.extend(mapper(item))
                    ends.append(len(run))
                outputs, self._outputs, self._ends = run, run, ends
                self._index = self._removed = 0
            self._index = outbox.offer_batch(ordinal, outputs, self._index)
            done = bisect_right(self._ends, self._index)
            inbox.remove(done - self._removed)  # these items are fully emitted
            self._removed = done
            if self._index < len(outputs):
                return
            self._outputs = None
