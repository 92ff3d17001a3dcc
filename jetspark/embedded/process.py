"""What both embedded servers need: a free port kept across restarts, and readiness polling."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def remembered_port(state_dir: Path, server: str, requested: int | None) -> int:
    """The port this server used last time (so its URL survives a restart), else a free one."""
    record = state_dir / f"{server}.port"
    if requested is not None:
        port = requested
    elif record.exists():
        port = int(record.read_text().strip())
    else:
        port = free_port()
    record.write_text(f"{port}\n")
    return port


def wait_until(ready: Callable[[], bool], *, deadline_s: float, what: str) -> None:
    """Poll ``ready`` until it is true, or raise after ``deadline_s``."""
    deadline = time.monotonic() + deadline_s
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not ready after {deadline_s:.0f} s")
        time.sleep(0.05)  # a server is starting; nothing to wait on but its socket


def log_tail(path: Path, lines: int = 20) -> str:
    if not path.exists():
        return "(no log)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
