"""Word count in two stages with Python processors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jetspark.processor import AbstractProcessor, Context, Inbox, Outbox


class Tokenizer(AbstractProcessor):
    """Splits ``item[field]`` (default ``line``) into lower-case words; emits ``{word}``.

    args: ``field`` (str).
    """

    output_schema = "word string"

    def init(self, outbox: Outbox, context: Context) -> None:
        super().init(outbox, context)
        field = str(context.args.get("field", "line"))

        def words(item: Mapping[str, Any]) -> list[str]:
            line = item[field]
            return line.lower().split() if line else []

        # One-field schema: the bare word is the item, no dict per word.
        self.words = self.flat_mapper(words)

    def process(self, ordinal: int, inbox: Inbox) -> None:
        self.words.process_inbox(inbox)


class Accumulator(AbstractProcessor):
    """Counts items by ``item[key]``, or sums ``item[add]``; emits ``{key, count}`` at the end.

    args: ``key`` (field, default ``word``), ``add`` (field to sum; default: count 1 each).
    Used twice in a two-stage word count: accumulate locally, then combine with
    ``{"key": "key", "add": "count"}`` behind a partitioned edge.
    """

    output_schema = "key string, count bigint"

    def init(self, outbox: Outbox, context: Context) -> None:
        super().init(outbox, context)
        self.key = str(context.args.get("key", "word"))
        add = context.args.get("add")
        self.add = str(add) if add is not None else None
        self.counts: dict[Any, int] = {}
        self.results: list[tuple[Any, int]] | None = None
        self.emitted = 0

    def try_process0(self, item: Any) -> bool:
        key = item[self.key] if isinstance(item, Mapping) else item
        amount = 1 if self.add is None else int(item[self.add])
        self.counts[key] = self.counts.get(key, 0) + amount
        return True

    def save_to_snapshot(self) -> bool:
        return self.try_save_entries(lambda: list(self.counts.items()))

    def restore_from_snapshot(self, inbox: Inbox) -> None:
        # Summing: after a rescale one processor may restore several processors' counts.
        for key, count in iter(inbox.poll, None):
            self.counts[key] = self.counts.get(key, 0) + count

    def complete(self) -> bool:
        if self.results is None:
            self.results = list(self.counts.items())
        self.emitted = self.outbox.offer_batch(-1, self.results, self.emitted)
        return self.emitted == len(self.results)
