"""The processor contract (SPEC §5), Jet's ``Processor`` in Python names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from jetspark.processor.context import Context
from jetspark.processor.inbox import Inbox
from jetspark.processor.outbox import Outbox


class Processor:
    """Base of every Python processor: one instance per processor g of its vertex.

    Output rows have a fixed schema (Spark's ``mapInArrow`` needs it up front): set
    ``output_schema`` to a Spark DDL string such as ``"word string, n bigint"``, or override
    ``schema_for(args)`` when it depends on the vertex's ``args``. An emitted item is a dict
    by field name, a tuple in schema order, or, for a one-field schema, the bare value.

    Every callback that returns a bool is called again, after the outbox was drained, until
    it returns True. None of them may block when ``is_cooperative()``.
    """

    output_schema: ClassVar[str] = ""

    outbox: Outbox
    context: Context

    @classmethod
    def schema_for(cls, args: Mapping[str, Any]) -> str:
        """The output schema as Spark DDL for a vertex with these ``args``."""
        return cls.output_schema

    def init(self, outbox: Outbox, context: Context) -> None:
        """Called once before any other callback."""
        self.outbox = outbox
        self.context = context

    def is_cooperative(self) -> bool:
        return True

    def process(self, ordinal: int, inbox: Inbox) -> None:
        """Handle items of the edge at ``ordinal``; leave unhandled ones in the inbox."""
        raise NotImplementedError(f"{type(self).__name__} takes no input (process not defined)")

    def try_process(self) -> bool:
        """Work not driven by input, called when the inbox is empty."""
        return True

    def try_process_watermark(self, watermark: int) -> bool:
        """A coalesced watermark arrived (streaming jobs only; batch jobs have none).

        Before returning True a processor should emit the watermark downstream (or one of
        its own): the default forwards it, returning False while the outbox refuses it.
        """
        return self.outbox.offer_watermark(watermark)

    def complete_edge(self, ordinal: int) -> bool:
        """The edge at ``ordinal`` is exhausted."""
        return True

    def complete(self) -> bool:
        """Every inbound edge is exhausted; a batch processor emits its results here."""
        return True

    def save_to_snapshot(self) -> bool:
        """Offer the state to ``outbox.offer_to_snapshot``; False to be called again."""
        return True

    def restore_from_snapshot(self, inbox: Inbox) -> None:
        """Take state entries ``(key, value)`` from the inbox."""
        if not inbox.is_empty():
            raise NotImplementedError(f"{type(self).__name__} has no snapshot restore")

    def finish_snapshot_restore(self) -> bool:
        return True

    def close(self) -> None:
        """Called last, also after a failure."""
