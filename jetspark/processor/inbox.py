"""The inbox of one inbound edge: a batch of items the processor removes as it handles them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

Item = Any


class Inbox:
    """Items received over one edge, oldest first (Jet's ``Inbox``).

    A processor must not remove an item before it has fully handled it: an item left in the
    inbox tells the runtime there is more work to do and is offered again on the next call.
    """

    __slots__ = ("_items", "_position")

    def __init__(self, items: list[Item] | None = None) -> None:
        self._items: list[Item] = items if items is not None else []
        self._position = 0

    def is_empty(self) -> bool:
        return self._position >= len(self._items)

    def __len__(self) -> int:
        return len(self._items) - self._position

    def __iter__(self) -> Iterator[Item]:
        """Iterate without removing (Jet's ``Inbox.iterator()``)."""
        return iter(self._items[self._position :])

    def peek(self) -> Item | None:
        """The head item, or None when empty; the item stays in the inbox."""
        return self._items[self._position] if self._position < len(self._items) else None

    def poll(self) -> Item | None:
        """Remove and return the head item, or None when empty."""
        if self._position >= len(self._items):
            return None
        item = self._items[self._position]
        self._position += 1
        return item

    def remove(self, count: int = 1) -> None:
        """Remove the head item (the ``count`` first items); raises ``IndexError``, removing
        nothing, when there are fewer."""
        if count < 0 or self._position + count > len(self._items):
            raise IndexError(f"remove({count}) on an inbox of {len(self)}")
        self._position += count

    def drain_while(self, handle: Callable[[Item], bool]) -> bool:
        """Pass the items to ``handle`` in order, removing each it returns True for, until it
        returns False (that item stays at the head); True when the inbox was emptied.

        ``AbstractProcessor``'s loop: one call per item, no per-item method call on the inbox.
        """
        items, position = self._items, self._position
        end = len(items)
        try:
            while position < end:
                if not handle(items[position]):
                    return False
                position += 1
        finally:
            self._position = position
        return True

    def drain(self, consumer: Callable[[Item], object]) -> int:
        """Pass every item to ``consumer`` and remove it; returns how many were drained."""
        items, start = self._items, self._position
        self._position = len(items)
        for item in items[start:]:
            consumer(item)
        return len(items) - start

    # -- runtime side ---------------------------------------------------------------------
    def _refill(self, items: list[Item]) -> None:
        """Replace the (empty) contents with a new batch; only the runtime calls this."""
        self._items = items
        self._position = 0

    @property
    def _consumed(self) -> int:
        return self._position
