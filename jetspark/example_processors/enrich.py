"""A processor with two inbound edges consumed by priority, like the seeds' hash join."""

from __future__ import annotations

from typing import Any

from jetspark.processor import AbstractProcessor, Context, Inbox, Outbox


class PriorityViolation(RuntimeError):
    """A lookup-table item arrived after stream items: the edges were not consumed in order."""


class LookupEnricher(AbstractProcessor):
    """Ordinal 0: the table ``{key, value}`` (give it the lower priority number); ordinal 1:
    stream items ``{key}``. Emits ``{key, value}`` per stream item (value null when unknown).

    Fails with ``PriorityViolation`` if a table item arrives after a stream item or after
    the stream, which the runtime's priority order rules out.
    """

    output_schema = "key string, value string"

    def init(self, outbox: Outbox, context: Context) -> None:
        super().init(outbox, context)
        self.table: dict[Any, Any] = {}
        self.stream_started = False
        self.table_complete = False

    def try_process0(self, item: Any) -> bool:
        if self.stream_started:
            raise PriorityViolation(f"table item {item!r} arrived after stream items")
        self.table[item["key"]] = item["value"]
        return True

    def try_process_item(self, ordinal: int, item: Any) -> bool:
        self.stream_started = True
        return self.try_emit((item["key"], self.table.get(item["key"])))

    def save_to_snapshot(self) -> bool:
        return self.try_save_entries(
            lambda: (
                [(("table", k), v) for k, v in self.table.items()]
                + [(("flags", None), (self.stream_started, self.table_complete))]
            )
        )

    def restore_from_snapshot(self, inbox: Inbox) -> None:
        for (kind, key), value in iter(inbox.poll, None):
            if kind == "table":
                self.table[key] = value
            else:
                self.stream_started, self.table_complete = value

    def complete_edge(self, ordinal: int) -> bool:
        if ordinal == 0:
            self.table_complete = True
        return True
