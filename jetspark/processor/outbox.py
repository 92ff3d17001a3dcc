"""The outbox a processor emits into, as the processor sees it (Jet's ``Outbox``).

Backpressure is a return value, as in Jet: a full bucket refuses an item (``offer`` returns
False) and a cooperative processor then returns from its callback, keeping its place, to be
called again after the runtime has drained the buckets. The runtime's implementation, with
what only the runtime calls, is ``jetspark.processor.runtime.outbox.RuntimeOutbox``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

ALL = -1
"""Offer to every outbound ordinal (Jet's ``tryEmit(item)``)."""


class Outbox(Protocol):
    """One bucket per outbound ordinal, refusing items at the edge's ``outbox_capacity``,
    plus the snapshot bucket and the watermarks."""

    def bucket_count(self) -> int:
        """How many outbound ordinals there are."""
        ...

    def has_room(self, ordinal: int = ALL) -> bool:
        """Whether the bucket (every bucket, for ``ALL``) would accept one more item."""
        ...

    def offer(self, ordinal: int | Sequence[int], item: Any) -> bool:
        """Add ``item`` to one bucket, to several, or to ``ALL``; all or nothing: False, adding
        nothing, when any addressed bucket is full."""
        ...

    def offer_batch(self, ordinal: int, items: Sequence[Any], start: int = 0) -> int:
        """Offer ``items[start:]`` in order until one is refused; returns the next index."""
        ...

    def offer_to_snapshot(self, key: Any, value: Any) -> bool:
        """Add a state entry to the snapshot bucket; False when it is full."""
        ...

    def offer_watermark(self, watermark: int) -> bool:
        """Emit a watermark on every outbound edge (Jet's ``tryEmit(watermark)``); refused, like
        an item to ``ALL``, while any bucket is full. Watermarks must increase strictly."""
        ...
