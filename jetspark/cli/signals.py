"""Signals ``jetspark up`` turns into events: SIGINT/SIGTERM ask it to stop, SIGCHLD wakes it."""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any


class Interrupted(Exception):
    """A stop was asked for while ``jetspark up`` was still starting."""


class StopSignals:
    """While in use, SIGINT and SIGTERM set ``requested`` and SIGCHLD sets ``wake``."""

    def __init__(self) -> None:
        self.wake = threading.Event()
        self.requested: str | None = None
        self.count = 0
        self._previous: dict[int, Any] = {}

    def _on_stop(self, signum: int, frame: FrameType | None) -> None:
        del frame
        self.count += 1
        if self.requested is None:
            self.requested = signal.Signals(signum).name
        self.wake.set()

    def _on_child(self, signum: int, frame: FrameType | None) -> None:
        del signum, frame
        self.wake.set()

    def __enter__(self) -> StopSignals:
        for signum, handler in (
            (signal.SIGINT, self._on_stop),
            (signal.SIGTERM, self._on_stop),
            (signal.SIGCHLD, self._on_child),
        ):
            self._previous[signum] = signal.signal(signum, handler)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def check(self) -> None:
        """Raise :class:`Interrupted` if a stop was asked for."""
        if self.requested is not None:
            raise Interrupted(self.requested)

    def hurry(self) -> bool:
        """A second Ctrl-C while stopping: do not wait for a graceful stop."""
        return self.count >= 2
