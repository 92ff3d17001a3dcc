"""What every bench that starts processes shares: serving an app with uvicorn in its own
process, stopping what was started, and turning SIGTERM into an exit that runs cleanups.

A bench that starts servers must stop them however it ends: normally, on an error, on
Ctrl-C (KeyboardInterrupt) and on SIGTERM (``timeout``, a CI runner). Python's default
SIGTERM ends the process without running ``finally`` blocks, so embedded PostgreSQL and
Valkey servers, uvicorn and workers outlived the bench; ``exit_on_sigterm`` makes SIGTERM
raise ``SystemExit`` in the main thread instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import httpx

from tests.live_server import free_port
from tests.live_server import stop_process as terminate

__all__ = ["exit_on_sigterm", "free_port", "terminate", "uvicorn_server", "wait_ready"]

ROOT = Path(__file__).resolve().parent.parent


def exit_on_sigterm() -> None:
    """SIGTERM (and SIGHUP) raise ``SystemExit(143)``: ``with`` blocks and ``finally`` run."""

    def stop(signum: int, frame: FrameType | None) -> None:
        del frame
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)


def wait_ready(
    url: str, process: subprocess.Popen[bytes], *, deadline_s: float, path: str = "/readyz"
) -> float:
    """Seconds until ``url + path`` answers 200; fails early if ``process`` exits."""
    started = time.perf_counter()
    while time.perf_counter() - started < deadline_s:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
        try:
            if httpx.get(f"{url}{path}", timeout=1.0).status_code == 200:
                return time.perf_counter() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.05)  # polling a server that is starting, not synchronising threads
    raise TimeoutError(f"{url}{path} not ready after {deadline_s} s")


@contextmanager
def uvicorn_server(
    app: str,
    *,
    env: Mapping[str, str] | None = None,
    workers: int = 1,
    factory: bool = False,
    ready_path: str = "/healthz",
    deadline_s: float = 120.0,
    log: Path | None = None,
) -> Iterator[tuple[str, float, subprocess.Popen[bytes]]]:
    """``app`` (``module:attribute``) under uvicorn in a process group of its own, with the
    options every API bench uses (uvloop and httptools when installed, no access log):
    yields its base URL, the seconds it took to answer ``ready_path``, and the process.
    Its output goes to ``log`` (warnings and errors only), else nowhere."""
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", app, *(["--factory"] if factory else [])]
    command += ["--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]
    command += ["--log-level", "warning", "--no-access-log"]
    output = log.open("ab") if log is not None else None
    try:
        process = subprocess.Popen(
            command,
            env=dict(env if env is not None else os.environ),
            cwd=ROOT,
            stdout=output or subprocess.DEVNULL,
            stderr=subprocess.STDOUT if output else subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches the bench, which stops it in order
        )
    finally:
        if output is not None:
            output.close()
    url = f"http://127.0.0.1:{port}"
    try:
        ready_s = wait_ready(url, process, deadline_s=deadline_s, path=ready_path)
        yield url, ready_s, process
    finally:
        terminate(process)
