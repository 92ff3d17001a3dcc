"""Adopt and reap orphans: whatever our children leave behind ends as our child, not init's.

A worker's Spark JVM outlives the worker by a moment, and ``pg_ctl`` leaves the postmaster
behind by design. As a Linux child subreaper, ``jetspark up`` becomes their parent: the whole
stack is one process tree (what ``bench/stack.py`` measures), and their exit statuses are
collected here — in a container whose PID 1 reaps nothing they would stay zombies for good.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Collection

import psutil

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Ask Linux to re-parent our descendants' orphans to us; False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def reap_orphans(keep: Collection[int] = ()) -> None:
    """Collect the exit status of adopted children that have exited (not those in ``keep``,
    whose ``Popen`` objects collect their own)."""
    for proc in psutil.Process().children():
        if proc.pid in keep:
            continue
        with contextlib.suppress(psutil.Error, ChildProcessError):
            if proc.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(proc.pid, os.WNOHANG)
