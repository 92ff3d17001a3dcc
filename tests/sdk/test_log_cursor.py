"""A followed job's log lines come once each, in whatever order they are published."""

from __future__ import annotations

from jetspark.sdk.client import LineCursor


def test_a_line_published_after_a_later_one_is_still_given_out() -> None:
    """A restarted stream's old attempt numbered its line 100 and published it after the new
    attempt's line 101: the follower used to skip it (`jetspark logs -f` missed a claim)."""
    cursor = LineCursor(100)
    assert [cursor.take(seq) for seq in (101, 100, 101, 100, 102)] == [
        True,
        True,
        False,
        False,
        True,
    ]
    assert cursor.complete_to == 103 and not cursor.ahead


def test_lines_before_the_start_and_pages_read_twice_are_not_given_out() -> None:
    cursor = LineCursor(5)
    assert not cursor.take(4)
    assert [cursor.take(seq) for seq in (5, 6, 8)] == [True, True, True]
    assert cursor.complete_to == 7 and cursor.ahead == {8}  # 7 may still come
    assert [cursor.take(seq) for seq in (6, 7, 8, 9)] == [False, True, False, True]
    assert cursor.complete_to == 10


def test_a_gap_that_never_fills_keeps_a_bounded_memory() -> None:
    cursor = LineCursor(0)
    for seq in range(1, LineCursor.MAX_AHEAD + 2):  # line 0 never comes
        assert cursor.take(seq)
    assert cursor.complete_to == LineCursor.MAX_AHEAD + 2 and not cursor.ahead
    assert not cursor.take(0)
