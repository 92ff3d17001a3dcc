"""Epochs of a backlogged stream are sized by time (``worker/engine/streaming/epoch_size``):
an attempt starts small, grows at most twofold per epoch, and shrinks when epochs run long."""

from __future__ import annotations

from worker.engine.streaming.epoch_size import FIRST_EPOCH_ITEMS, FLOOR_ITEMS, EpochSizer


def test_an_attempt_starts_small_and_at_most_doubles() -> None:
    sizer = EpochSizer(ceiling=2_000_000, target_s=1.0)
    assert sizer.cap == FIRST_EPOCH_ITEMS
    sizer.observe([FIRST_EPOCH_ITEMS], seconds=0.01)  # far under the target: x2, not x100
    assert sizer.cap == 2 * FIRST_EPOCH_ITEMS
    for _ in range(10):
        sizer.observe([sizer.cap], seconds=0.01)
    assert sizer.cap == 2_000_000  # never past max_items_per_epoch


def test_a_long_full_epoch_shrinks_the_next_to_the_target() -> None:
    sizer = EpochSizer(ceiling=2_000_000, target_s=1.0)
    sizer.observe([sizer.cap], seconds=0.4)  # the quickest full epoch: fixed cost <= 0.4 s
    assert sizer.cap == 200_000
    sizer.observe([sizer.cap], seconds=4.0)  # a slow epoch: a quarter of it takes ~1 s
    assert sizer.cap == 50_000


def test_a_quiet_epoch_says_nothing_of_the_cap() -> None:
    sizer = EpochSizer(ceiling=2_000_000, target_s=1.0)
    sizer.observe([10, 0], seconds=5.0)  # no source was held back by the cap
    sizer.observe([], seconds=5.0)  # no source ran
    assert sizer.cap == FIRST_EPOCH_ITEMS


def test_a_fixed_cost_over_half_the_target_sizes_epochs_to_twice_that_cost() -> None:
    """A heavy DAG whose smallest epochs take 3 s gets ~6 s epochs, not ever smaller ones
    that would be all overhead."""
    sizer = EpochSizer(ceiling=10_000_000, target_s=1.0)
    sizer.observe([sizer.cap], seconds=3.0)
    assert sizer.cap == 2 * FIRST_EPOCH_ITEMS  # 6 s wanted, at most twofold
    sizer.observe([sizer.cap], seconds=6.0)
    assert sizer.cap == 2 * FIRST_EPOCH_ITEMS


def test_the_floor_and_the_switch() -> None:
    sizer = EpochSizer(ceiling=2_000_000, target_s=1.0)
    sizer.observe([sizer.cap], seconds=0.5)
    sizer.observe([sizer.cap], seconds=10_000.0)
    assert sizer.cap == FLOOR_ITEMS
    small = EpochSizer(ceiling=400, target_s=1.0)  # a cap under the floor stays the cap
    small.observe([400], seconds=100.0)
    assert small.cap == 400
    fixed = EpochSizer(ceiling=2_000_000, target_s=0)  # JETSPARK_STREAM_EPOCH_TARGET_MS=0
    fixed.observe([2_000_000], seconds=60.0)
    assert fixed.cap == 2_000_000
