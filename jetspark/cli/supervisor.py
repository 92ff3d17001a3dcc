"""Child processes of ``jetspark up``: started in their own process groups, stopped in order.

Each child leads a new process group (``start_new_session``): a Ctrl-C in the terminal then
reaches ``jetspark up`` alone, which stops the children itself — SIGTERM, a grace period, then
SIGKILL. Whatever a child started (a worker's Spark JVM and its Python workers) stays in the
child's group, so the group tells us when everything of that child is gone, even if the child
itself died first and left orphans.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import psutil

from jetspark.cli.reaper import reap_orphans
from jetspark.embedded.process import log_tail

POLL_S = 0.1
"""How often a stop checks whether the children's processes are gone."""


@dataclass
class Child:
    """A started child: its name in messages, its process and the file its output goes to."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    log_start: int = 0
    """Where this run's output begins in ``log`` (earlier runs' output comes before)."""

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        """What the child wrote in this run."""
        try:
            with self.log.open("rb") as file:
                file.seek(self.log_start)
                return file.read().decode(errors="replace")
        except OSError:
            return ""

    def last_log_line(self) -> str:
        lines = [line for line in log_tail(self.log, 20).splitlines() if line.strip()]
        return lines[-1].strip() if lines else "(no output)"


def group_members(pgid: int) -> list[psutil.Process]:
    """Live (non-zombie) processes of a process group."""
    members = []
    for proc in psutil.process_iter(["status"]):
        if proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        try:
            if os.getpgid(proc.pid) == pgid:
                members.append(proc)
        except (ProcessLookupError, PermissionError):
            continue
    return members


class Supervisor:
    """Starts children with one environment and stops them all, whatever state they are in."""

    def __init__(self, *, env: Mapping[str, str], logs: Path) -> None:
        self.env = dict(env)
        self.logs = logs
        self.children: list[Child] = []

    def start(self, name: str, argv: list[str], env: Mapping[str, str] | None = None) -> Child:
        """Start ``argv`` as ``name``, with ``env`` instead of the shared environment if given."""
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / f"{name}.log"
        with log.open("ab") as out:
            out.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(argv)}\n".encode())
            out.flush()
            log_start = out.tell()
            process = subprocess.Popen(
                argv,
                env=dict(env) if env is not None else self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        child = Child(name=name, process=process, log=log, log_start=log_start)
        self.children.append(child)
        return child

    def first_exited(self) -> Child | None:
        """A child that has exited (reaping it), or None while all run."""
        for child in self.children:
            if child.process.poll() is not None:
                return child
        return None

    def _alive(self) -> list[Child]:
        """Children with anything left running in their process group."""
        for child in self.children:
            child.process.poll()  # reap, so that a finished child is no zombie of ours
        reap_orphans(keep=[child.pid for child in self.children])
        return [child for child in self.children if group_members(child.pid)]

    def stop(
        self, *, grace_s: float = 20.0, hurry: Callable[[], bool] = lambda: False
    ) -> list[str]:
        """SIGTERM every child, wait up to ``grace_s`` (less if ``hurry()``), then SIGKILL.

        Returns the names of the children whose processes had to be killed.
        """
        for child in self.children:
            if child.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        alive = self._alive()
        while alive and time.monotonic() < deadline and not hurry():
            time.sleep(POLL_S)  # waiting for other processes to exit, with a deadline
            alive = self._alive()
        for child in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10.0
        while self._alive() and time.monotonic() < deadline:
            time.sleep(POLL_S)  # SIGKILL is not instant for a process in uninterruptible I/O
        return [child.name for child in alive]
