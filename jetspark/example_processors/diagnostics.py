"""Processors that report where they run or fail on purpose, to check a deployment."""

from __future__ import annotations

import logging
from typing import Any

from jetspark.processor import AbstractProcessor, Context, Outbox


def _spark_partition() -> int:
    from pyspark import TaskContext

    task = TaskContext.get()
    return task.partitionId() if task is not None else -1


class PartitionProbe(AbstractProcessor):
    """Emits ``copies`` rows per input item ``{seq, replica, global_index, spark_partition}``,
    one ``try_emit`` at a time, resuming at the copy the outbox refused.

    args: ``copies`` (int, default 1), ``field`` (the item's sequence field, default ``seq``).
    """

    output_schema = "seq bigint, replica int, global_index int, spark_partition int"

    def init(self, outbox: Outbox, context: Context) -> None:
        super().init(outbox, context)
        self.copies = int(context.args.get("copies", 1))
        self.field = str(context.args.get("field", "seq"))
        self.next_copy = 0
        self.partition = _spark_partition()

    def try_process0(self, item: Any) -> bool:
        seq, index = item[self.field], self.context.global_index
        while self.next_copy < self.copies:
            if not self.try_emit((seq, self.next_copy, index, self.partition)):
                return False
            self.next_copy += 1
        self.next_copy = 0
        return True


class FailOn(AbstractProcessor):
    """Passes ``{value}`` through and raises ``ValueError`` on the item whose ``field``
    equals ``value`` (args: ``field``, ``value``)."""

    output_schema = "value string"

    def try_process0(self, item: Any) -> bool:
        field = str(self.context.args.get("field", "value"))
        if item[field] == self.context.args.get("value"):
            raise ValueError(f"refusing {field}={item[field]!r}")
        return self.try_emit(str(item[field]))


class LogEach(AbstractProcessor):
    """Passes ``{value}`` through, logging each item (``logging``, INFO, logger
    ``jetspark.example_processors.diagnostics``) and printing it: checks that a processor's
    own lines reach its job's log (args: ``field``, default ``value``)."""

    output_schema = "value string"

    def try_process0(self, item: Any) -> bool:
        value = str(item[str(self.context.args.get("field", "value"))])
        if not self.try_emit(value):
            return False  # offered again: told once, when it went out
        logging.getLogger(__name__).info("processor %d saw %s", self.context.global_index, value)
        print(f"printed {value}")
        return True
