"""Child processes of ``jetspark up``: started in their own process groups, stopped in order.

Each child leads a new process group (``start_new_session``): a Ctrl-C in the terminal then
reaches ``jetspark up`` alone, which stops the children itself — SIGTERM, a grace period, then
SIGKILL. Whatever a child started (a worker's Spark JVM and its Python workers) stays in the
child's group, so the group tells us when everything of that child is gone, even if the child
itself died first and left orphans.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] | None = None
    """Its own environment, when not the shared one (kept for a restart)."""

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
        child = Child(
            name=name,
            process=process,
            log=log,
            log_start=log_start,
            argv=argv,
            env=dict(env) if env is not None else None,
        )
        self.children.append(child)
        return child

    def restart(self, child: Child) -> Child:
        """Start a dead child again in its place, once nothing of its group is left."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)  # what it left behind (a worker's JVM)
        self.children.remove(child)
        return self.start(child.name, child.argv, child.env)

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


@dataclass
class Restarts:
    """When a child (or an embedded server) that died is started again, and when to give up.

    A death is restarted after a backoff that doubles from ``initial_s`` up to ``max_s`` for
    a name that keeps dying; ``max_deaths`` deaths within ``window_s`` seconds mean it will
    not stay up, and the stack stops naming it. The counts go to ``state_file`` (JSON,
    ``{name: restarts}``) for the API's ``/metrics`` (``jetspark_supervisor_restarts_total``).
    """

    state_file: Path
    max_deaths: int = 5
    window_s: float = 60.0
    initial_s: float = 0.5
    max_s: float = 10.0
    counts: dict[str, int] = field(default_factory=dict)
    deaths: dict[str, deque[float]] = field(default_factory=dict)

    def died(self, name: str) -> float | None:
        """Record a death; the seconds to wait before the restart, or None to give up."""
        now = time.monotonic()
        recent = self.deaths.setdefault(name, deque())
        recent.append(now)
        while recent and recent[0] < now - self.window_s:
            recent.popleft()
        if len(recent) >= self.max_deaths:
            return None
        return float(min(self.max_s, self.initial_s * 2 ** (len(recent) - 1)))

    def restarted(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1
        with contextlib.suppress(OSError):  # the count is for /metrics; never stop for it
            self.state_file.write_text(json.dumps(self.counts))


def read_restarts(state_file: Path) -> dict[str, int]:
    """The counts ``Restarts`` wrote (empty when there are none or the file is unreadable)."""
    try:
        loaded = json.loads(state_file.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {str(k): int(v) for k, v in loaded.items() if isinstance(v, int)}
