"""A source-role Python processor: no inbound edges, everything happens in ``complete()``."""

from __future__ import annotations

from jetspark.processor import AbstractProcessor, Context, Outbox


class Numbers(AbstractProcessor):
    """Emits ``{seq, global_index}`` for seq in ``range(count)``, item i from processor i % P.

    args: ``count`` (int).
    """

    output_schema = "seq bigint, global_index int"

    def init(self, outbox: Outbox, context: Context) -> None:
        super().init(outbox, context)
        count = int(context.args.get("count", 0))
        self.pending = iter(range(context.global_index, count, context.total_parallelism))
        self.held: int | None = None

    def complete(self) -> bool:
        while True:
            if self.held is None:
                self.held = next(self.pending, None)
                if self.held is None:
                    return True
            if not self.try_emit((self.held, self.context.global_index)):
                return False
            self.held = None
