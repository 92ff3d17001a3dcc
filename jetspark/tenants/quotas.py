"""Per-principal counts of things held open (event streams), bounded by a quota."""

from __future__ import annotations

import threading
from collections import Counter


class ConnectionSlots:
    """How many of something each principal holds now; ``limit`` 0 means no limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held: Counter[str] = Counter()
        self.lock = threading.Lock()

    def acquire(self, name: str) -> bool:
        """Take a slot for ``name``; False (nothing taken) when it holds ``limit`` already."""
        with self.lock:
            if self.limit and self.held[name] >= self.limit:
                return False
            self.held[name] += 1
            return True

    def release(self, name: str) -> None:
        with self.lock:
            self.held[name] -= 1
            if self.held[name] <= 0:
                del self.held[name]  # bounded: only principals holding slots are kept
