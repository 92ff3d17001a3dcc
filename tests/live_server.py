"""Serve an ASGI app with a real uvicorn on a free loopback port, in a thread; or run
``jetspark api`` in a process of its own (several API processes on one database)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
import uvicorn


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def live_server(app: Any, *, deadline_s: float = 20.0) -> Iterator[str]:
    """Yield the base URL once uvicorn has started; stop it on exit."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + deadline_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"uvicorn did not start on port {port}")
        time.sleep(0.01)  # waiting for the server thread's start flag, with a deadline
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


JETSPARK = str(Path(sys.executable).with_name("jetspark"))


@dataclass
class ApiProcess:
    """A ``jetspark api`` serving in a process of its own."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""


@contextmanager
def api_process(
    settings: Mapping[str, str], log_dir: Path, *, workers: int = 1, deadline_s: float = 120.0
) -> Iterator[ApiProcess]:
    """``jetspark api`` on a free loopback port with ``settings`` (``JETSPARK_*``) as its
    only jetspark environment; yielded once ``/readyz`` answers 200, stopped (SIGTERM, then
    SIGKILL of its process group) on exit."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("JETSPARK_")}
    log = log_dir / f"api-{port}.log"
    command = [JETSPARK, "api", "--port", str(port), "--workers", str(workers)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*command, "--log-level", "warning"],
            env=env | dict(settings),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    served = ApiProcess(f"http://127.0.0.1:{port}", process, log)
    try:
        deadline = time.monotonic() + deadline_s
        while not _ready(served):
            assert time.monotonic() < deadline, f"jetspark api not ready:\n{served.output()}"
            time.sleep(0.05)  # polling a process that is starting, bounded by the deadline
        yield served
    finally:
        stop_process(process)


def _ready(served: ApiProcess) -> bool:
    assert served.process.poll() is None, f"jetspark api exited:\n{served.output()}"
    try:
        return httpx.get(f"{served.url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def stop_process(process: subprocess.Popen[bytes], grace_s: float = 30.0) -> None:
    """SIGTERM, then SIGKILL of its process group after ``grace_s``; reaped either way."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def serving_processes(supervisor_pid: int) -> list[psutil.Process]:
    """The processes uvicorn's supervisor (``--workers N``) serves from: its spawned
    children, not multiprocessing's resource tracker."""
    found = []
    for child in psutil.Process(supervisor_pid).children():
        with contextlib.suppress(psutil.Error):
            if "spawn_main" in " ".join(child.cmdline()):
                found.append(child)
    return found
