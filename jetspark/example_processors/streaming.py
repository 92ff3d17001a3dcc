"""Processors for streaming jobs: state kept in snapshots, watermarks forwarded or emitted.

In a streaming job an instance usually lives from epoch to epoch, but the state that must
survive a restart (or an epoch that runs in another Python worker) is what it saves in
``save_to_snapshot`` and gets back through ``restore_from_snapshot``
(docs/PYTHON_PROCESSORS.md, "In streaming jobs").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jetspark.processor import AbstractProcessor, Context, Inbox, Outbox


class RunningCount(AbstractProcessor):
    """Emits ``{key, count}`` per item: how many items with ``item[key]`` it has seen so far.

    args: ``key`` (field, default ``key``). The counts are saved per key, so after a rescale
    each key's count follows the key to its new processor (give the vertex a partitioned
    edge on the same field).
    """

    output_schema = "key string, count bigint"

    def init(self, outbox: Outbox, context: Context) -> None:
        super().init(outbox, context)
        self.key = str(context.args.get("key", "key"))
        self.counts: dict[Any, int] = {}
        """By the key as it is: its snapshot entry then lands in the key's partition."""
        self.held: tuple[str, int] | None = None

    def try_process0(self, item: Any) -> bool:
        if self.held is None:
            key = item[self.key]
            count = self.counts.get(key, 0) + 1
            self.counts[key] = count
            self.held = (str(key), count)
        if not self.try_emit(self.held):
            return False  # counted already: emitted when called again with the same item
        self.held = None
        return True

    def save_to_snapshot(self) -> bool:
        return self.try_save_entries(lambda: list(self.counts.items()))

    def restore_from_snapshot(self, inbox: Inbox) -> None:
        for key, count in iter(inbox.poll, None):
            self.counts[key] = self.counts.get(key, 0) + count


class PassThrough(AbstractProcessor):
    """Emits every item unchanged and forwards watermarks, checking them on the way.

    args: ``schema`` (the items' Spark DDL, e.g. ``"seq bigint, ts bigint"``). Fails with
    ``AssertionError`` when a watermark it is offered is not above the previous one, also
    across epochs: the last one is kept in its snapshot.
    """

    @classmethod
    def schema_for(cls, args: Mapping[str, Any]) -> str:
        return str(args.get("schema", ""))

    def init(self, outbox: Outbox, context: Context) -> None:
        super().init(outbox, context)
        self.last_watermark: int | None = None

    def try_process0(self, item: Any) -> bool:
        return self.try_emit(item)

    def try_process_watermark(self, watermark: int) -> bool:
        last = self.last_watermark
        if last is not None and watermark <= last:
            raise AssertionError(f"watermark {watermark} offered after {last}")
        if not self.try_emit_watermark(watermark):
            return False
        self.last_watermark = watermark
        return True

    def save_to_snapshot(self) -> bool:
        if self.last_watermark is None:
            return True
        return self.outbox.offer_to_snapshot(None, self.last_watermark)

    def restore_from_snapshot(self, inbox: Inbox) -> None:
        for _, watermark in iter(inbox.poll, None):
            if self.last_watermark is None or watermark > self.last_watermark:
                self.last_watermark = watermark


class FixedWatermark(AbstractProcessor):
    """Passes ``item[field]`` (default ``seq``) on as ``{value}`` and emits the watermark
    ``args.watermark`` from ``try_process`` (as a processor emitting watermarks during lulls
    does) once at the start and again after every inbox it processed; the watermarks it is
    offered are dropped.

    The second emission repeats the first, which is not allowed: a job with this processor
    fails naming its vertex (for tests of that rule).
    """

    output_schema = "value bigint"

    def init(self, outbox: Outbox, context: Context) -> None:
        super().init(outbox, context)
        self.field = str(context.args.get("field", "seq"))
        self.watermark = int(context.args.get("watermark", 0))
        self.due = True

    def try_process0(self, item: Any) -> bool:
        if not self.try_emit(item[self.field]):
            return False
        self.due = True
        return True

    def try_process(self) -> bool:
        if self.due:
            if not self.try_emit_watermark(self.watermark):
                return False
            self.due = False
        return True

    def try_process_watermark(self, watermark: int) -> bool:
        return True


class InstanceCount(AbstractProcessor):
    """Emits ``{seq, processor, created, epochs}`` per item: how many instances processor g
    has been created as so far in this job, and in how many epochs it saved its state.

    Both counts are kept in its snapshot, so they run on across instances: with fresh
    instances every epoch ``created`` equals ``epochs`` (plus one); with instances kept from
    epoch to epoch it stays far below. For tests of that rule (docs/PYTHON_PROCESSORS.md).
    args: ``field`` (the item's sequence field, default ``seq``).
    """

    output_schema = "seq bigint, processor int, created int, epochs int"

    def init(self, outbox: Outbox, context: Context) -> None:
        super().init(outbox, context)
        self.field = str(context.args.get("field", "seq"))
        self.created, self.epochs = 1, 0

    def try_process0(self, item: Any) -> bool:
        row = (item[self.field], self.context.global_index, self.created, self.epochs)
        return self.try_emit(row)

    def save_to_snapshot(self) -> bool:
        if not self.outbox.offer_to_snapshot(None, (self.created, self.epochs + 1)):
            return False
        self.epochs += 1
        return True

    def restore_from_snapshot(self, inbox: Inbox) -> None:
        for _, (created, epochs) in iter(inbox.poll, None):
            self.created, self.epochs = self.created + created, max(self.epochs, epochs)
