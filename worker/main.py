"""``jetspark worker`` / ``python -m worker.main``: the worker program (``worker.program``).

Its modules are imported on a thread of the lowest CPU priority (Linux gives each thread its
own nice value; threads it starts inherit it, so the import thread starts none). A worker is
often started because another died (``jetspark up`` restarts it 0.5 s later), exactly when
the surviving worker resumes the dead one's stream from its snapshot: imported at normal
priority, the replacement's two seconds of imports took that CPU and slowed the takeover by
about as much (``bench.chaos``). The worker then runs at normal priority.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from types import ModuleType

PROGRAM = "worker.program"


def import_at_low_priority(name: str) -> ModuleType:
    """Import ``name`` on a thread of nice 19 and return the module (an import error is
    raised here, by importing it again)."""

    def load() -> None:
        with contextlib.suppress(OSError, AttributeError):  # not Linux: a normal import
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        with contextlib.suppress(BaseException):  # raised again below, on the calling thread
            importlib.import_module(name)

    thread = threading.Thread(target=load, name="imports")
    thread.start()
    thread.join()
    return importlib.import_module(name)


if __name__ == "__main__":
    import_at_low_priority(PROGRAM).run_worker()
