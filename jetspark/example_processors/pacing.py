"""Processors that set a pace: wide items fast, or a sink that takes its time per item.

Together they show backpressure: ``Padded`` feeding ``SlowSink`` spends most of its time
waiting for the sink to take its output.
"""

from __future__ import annotations

import time
from typing import Any

from jetspark.processor import AbstractProcessor, Context, Outbox


class Padded(AbstractProcessor):
    """Emits ``{seq, pad}`` per input item: its ``seq`` field and ``bytes`` characters.

    args: ``bytes`` (int, default 1000), ``field`` (default ``seq``).
    """

    output_schema = "seq bigint, pad string"

    def init(self, outbox: Outbox, context: Context) -> None:
        super().init(outbox, context)
        self.pad = "x" * int(context.args.get("bytes", 1000))
        self.field = str(context.args.get("field", "seq"))

    def try_process0(self, item: Any) -> bool:
        return self.try_emit((item[self.field], self.pad))


class SlowSink(AbstractProcessor):
    """Takes ``per_item_ms`` milliseconds per item and emits nothing (args: ``per_item_ms``,
    default 1)."""

    output_schema = "seq bigint"

    def init(self, outbox: Outbox, context: Context) -> None:
        super().init(outbox, context)
        self.delay_s = float(context.args.get("per_item_ms", 1)) / 1000

    def try_process0(self, item: Any) -> bool:
        time.sleep(self.delay_s)
        return True
