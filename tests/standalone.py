"""A Spark standalone cluster on loopback for tests and benches: a master and one-core workers
started from the pyspark installation (``spark-class``), always stopped afterwards."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spark_class() -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / "spark-class")


@dataclass(frozen=True)
class Standalone:
    master_url: str
    ui: str
    work_dirs: list[Path]


def wait_for_workers(ui: str, count: int, deadline_s: float = 120) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            alive = httpx.get(f"{ui}/json/", timeout=2).json().get("aliveworkers", 0)
            if alive >= count:
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.2)  # polling daemons that are starting, not synchronising threads
    raise TimeoutError(f"{count} workers did not register at {ui} within {deadline_s} s")


@contextmanager
def standalone_cluster(
    logs: Path, *, workers: int = 2, cores: int = 1, memory: str = "1g"
) -> Iterator[Standalone]:
    """A master and ``workers`` workers of ``cores`` cores each; every process is stopped
    when the block ends, whatever happened in it."""
    logs.mkdir(parents=True, exist_ok=True)
    # Lean daemons: the machine is shared; executors get their own memory setting.
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(logs),
        "SPARK_DAEMON_MEMORY": "256m",
    }
    port, ui_port = free_port(), free_port()
    master_url = f"spark://127.0.0.1:{port}"
    processes: list[subprocess.Popen[bytes]] = []
    files: list[IO[bytes]] = []
    work_dirs = [logs / f"work-{i}" for i in range(workers)]

    def start(*args: str, log_name: str) -> None:
        log = (logs / log_name).open("wb")
        files.append(log)
        processes.append(
            subprocess.Popen(
                [spark_class(), *args],
                env=env,
                stdout=log,
                stderr=log,
                start_new_session=True,  # its group: executors it launched go with it
            )
        )

    try:
        start("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
              str(port), "--webui-port", str(ui_port), log_name="master.log")  # fmt: skip
        for i, work in enumerate(work_dirs):
            start("org.apache.spark.deploy.worker.Worker", master_url, "--host", "127.0.0.1",
                  "--cores", str(cores), "--memory", memory, "--webui-port", str(free_port()),
                  "--work-dir", str(work), log_name=f"worker-{i}.log")  # fmt: skip
        wait_for_workers(f"http://127.0.0.1:{ui_port}", workers)
        yield Standalone(master_url, f"http://127.0.0.1:{ui_port}", work_dirs)
    finally:
        _stop(processes)
        for log in files:
            log.close()


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    import signal

    for process in reversed(processes):
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):  # executors that outlived their worker
            os.killpg(process.pid, signal.SIGKILL)
