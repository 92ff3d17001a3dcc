"""Waiting on a condition with a deadline: a test polls state it cannot be woken by."""

from __future__ import annotations

import time
from collections.abc import Callable


def poll(
    check: Callable[[], object], *, what: str, deadline_s: float = 120, every_s: float = 0.05
) -> None:
    """Return once ``check()`` is true; fail naming ``what`` past ``deadline_s`` seconds."""
    deadline = time.monotonic() + deadline_s
    while not check():
        assert time.monotonic() < deadline, f"not within {deadline_s} s: {what}"
        time.sleep(every_s)  # polling a server's or Spark's state, bounded by the deadline
