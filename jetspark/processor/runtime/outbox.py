"""The runtime's outbox: one bounded bucket per outbound ordinal, plus the snapshot bucket and
the watermarks the processor emitted; what a processor sees of it is the ``Outbox`` protocol
(``jetspark.processor.outbox``), the rest (``take``, ``begin_call``, ``pending``, the refusal
counts) is the runtime's.

Backpressure is a return value, as in Jet: a full bucket refuses an item (``offer`` returns
False) and a cooperative processor then returns from its callback, keeping its place, to be
called again after the runtime has drained the buckets.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from jetspark.processor.outbox import ALL


class RuntimeOutbox:
    """Buckets that refuse items at their edge's ``outbox_capacity`` (an ``Outbox``)."""

    def __init__(
        self, capacities: Sequence[int], *, snapshot_capacity: int = 2048, strict: bool = False
    ) -> None:
        if any(c < 1 for c in capacities):
            raise ValueError("outbox capacities must be at least 1")
        self.capacities = tuple(capacities)
        self.buckets: list[list[Any]] = [[] for _ in capacities]
        self.snapshot_bucket: list[tuple[Any, Any]] = []
        self.snapshot_capacity = snapshot_capacity
        self.watermarks: list[int] = []
        """Watermarks offered since the last drain, in order (streaming jobs only)."""
        self.refusals = 0
        self.first_refusal_ns: int | None = None
        """When the first item was refused since the last drain (for blocked time)."""
        self.strict = strict
        self.violations: list[str] = []
        self._refused_in_call = False

    def bucket_count(self) -> int:
        return len(self.buckets)

    def has_room(self, ordinal: int = ALL) -> bool:
        """Whether the bucket (every bucket, for ``ALL``) would accept one more item."""
        if ordinal == ALL:
            return all(len(b) < c for b, c in zip(self.buckets, self.capacities, strict=True))
        return len(self.buckets[ordinal]) < self.capacities[ordinal]

    def offer(self, ordinal: int | Sequence[int], item: Any) -> bool:
        """Add ``item`` to one bucket, to several, or to ``ALL``; all-or-nothing.

        Returns False, adding nothing, when any addressed bucket is full.
        """
        ordinals = self._ordinals(ordinal)
        buckets, capacities = self.buckets, self.capacities
        for o in ordinals:
            if len(buckets[o]) >= capacities[o]:
                return self._refuse()
        self._check_after_refusal()
        for o in ordinals:
            buckets[o].append(item)
        return True

    def offer_batch(self, ordinal: int, items: Sequence[Any], start: int = 0) -> int:
        """Offer ``items[start:]`` in order until one is refused; returns the next index.

        Equivalent to calling ``offer`` per item and stopping at the first refusal, without
        the per-item call: helpers use it to keep the hot path tight.
        """
        buckets = self.buckets
        if len(buckets) == 1 and ordinal in (0, ALL):
            return self._offer_batch_to(0, items, start)
        ordinals = self._ordinals(ordinal)
        if not ordinals:
            return len(items)
        room = min(self.capacities[o] - len(buckets[o]) for o in ordinals)
        end = min(len(items), start + max(room, 0))
        if end > start:
            self._check_after_refusal()
            chunk = items[start:end]
            for o in ordinals:
                buckets[o].extend(chunk)
        if end < len(items):
            self._refuse()
        return end

    def _offer_batch_to(self, ordinal: int, items: Sequence[Any], start: int) -> int:
        bucket = self.buckets[ordinal]
        end = start + self.capacities[ordinal] - len(bucket)
        count = len(items)
        if self.strict and end > start:
            self._check_after_refusal()
        if end >= count:
            bucket.extend(items if start == 0 else items[start:])
            return count
        if end > start:
            bucket.extend(items[start:end])
        else:
            end = start
        self._refuse()
        return end

    def offer_to_snapshot(self, key: Any, value: Any) -> bool:
        """Add a state entry to the snapshot bucket; False when it is full."""
        if len(self.snapshot_bucket) >= self.snapshot_capacity:
            return self._refuse()
        self.snapshot_bucket.append((key, value))
        return True

    def offer_watermark(self, watermark: int) -> bool:
        """Emit a watermark on every outbound edge (Jet's ``tryEmit(watermark)``).

        Refused, like an item to ``ALL``, while any bucket is full. Watermarks must increase
        strictly: in a streaming job a processor emitting one not above its previous one
        fails the job. Batch jobs have no watermarks: the runtime drops them.
        """
        if not self.has_room(ALL):
            return self._refuse()
        self._check_after_refusal()
        self.watermarks.append(int(watermark))
        return True

    def _ordinals(self, ordinal: int | Sequence[int]) -> Sequence[int]:
        if isinstance(ordinal, int):
            return range(len(self.buckets)) if ordinal == ALL else (ordinal,)
        return ordinal

    def _refuse(self) -> bool:
        self.refusals += 1
        if self.first_refusal_ns is None:
            self.first_refusal_ns = time.perf_counter_ns()
        self._check_after_refusal()
        self._refused_in_call = True
        return False

    def _check_after_refusal(self) -> None:
        if self.strict and self._refused_in_call:
            self.violations.append(
                "offered again after the outbox refused in the same call: a cooperative "
                "processor must return and resume when called again"
            )

    # -- runtime side ---------------------------------------------------------------------
    def begin_call(self) -> None:
        """The runtime is about to call a processor callback."""
        self._refused_in_call = False

    def take(self, ordinal: int) -> list[Any]:
        """Empty one bucket and return its items."""
        items = self.buckets[ordinal]
        self.buckets[ordinal] = []
        return items

    def take_snapshot(self) -> list[tuple[Any, Any]]:
        entries, self.snapshot_bucket = self.snapshot_bucket, []
        return entries

    def take_watermarks(self) -> list[int]:
        marks, self.watermarks = self.watermarks, []
        return marks

    def pending(self) -> int:
        return sum(len(b) for b in self.buckets) + len(self.snapshot_bucket)
