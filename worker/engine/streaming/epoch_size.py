"""How much a source may read in one epoch: enough to keep Spark busy, little enough that
the epoch, and with it the next snapshot, ends about ``target_s`` after it starts.

An epoch is the engine's snapshot barrier: nothing commits until it ends. With a fixed cap,
a backlogged stream ran epochs as long as the cap made them (2 M items by default, many
seconds of work on a small machine), so a takeover waited for a replayed epoch of that size
before its first snapshot, and every result waited as long. Flink sizes its in-flight
buffers the same way, so a checkpoint barrier passes in about a second (buffer debloating,
1 s target); here the cap of the next epoch follows the time the last full ones took.

A new attempt starts at ``FIRST_EPOCH_ITEMS`` and at most doubles per epoch (a cold JVM's
first epochs are slow, and a small first epoch commits a takeover's snapshot soon). An epoch
replayed from the epoch log is not sized: it reads what the lost attempt logged.
"""

from __future__ import annotations

from collections.abc import Iterable

FIRST_EPOCH_ITEMS = 100_000
"""The cap of an attempt's first planned epoch (when ``max_items_per_epoch`` allows it)."""
FLOOR_ITEMS = 1_000
"""The cap never goes below this (or ``max_items_per_epoch``, when that is smaller)."""
OVERHEAD_SHARE = 0.5
"""An epoch at most this share fixed cost: when the quickest full epoch seen, about that
cost, is over half the target, epochs are sized to twice it instead."""


class EpochSizer:
    """The per-source item cap of the next planned epoch."""

    def __init__(self, ceiling: int, target_s: float) -> None:
        self.ceiling = max(1, ceiling)
        self.target_s = target_s
        self.cap = self.ceiling if target_s <= 0 else min(self.ceiling, FIRST_EPOCH_ITEMS)
        self.quickest_s: float | None = None
        """The shortest full epoch of this attempt: an upper bound on an epoch's fixed cost."""

    def observe(self, read: Iterable[int], seconds: float) -> None:
        """After a planned epoch whose sources read ``read`` items each, in ``seconds`` from
        its planning to its barrier. Only a full epoch (a source held back by the cap) says
        how long the cap's worth takes; a quiet stream leaves the cap where it is."""
        if self.target_s <= 0 or seconds <= 0 or not any(n >= self.cap for n in read):
            return
        self.quickest_s = seconds if self.quickest_s is None else min(self.quickest_s, seconds)
        target = max(self.target_s, self.quickest_s / OVERHEAD_SHARE)
        wanted = int(self.cap * target / seconds)
        self.cap = max(min(FLOOR_ITEMS, self.ceiling), min(wanted, 2 * self.cap, self.ceiling))
