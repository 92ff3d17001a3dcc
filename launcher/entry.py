"""The ``jetspark`` console script (and ``python -m launcher``).

``jetspark worker`` execs the worker program before the CLI is imported
(``launcher.worker_program``): the CLI's client side (typer, the SDK, httpx, the DAG model)
costs seconds of CPU that a replacement worker would take from the takeover beside it. Every
other command goes to the CLI (``launcher.main``).
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run ``jetspark`` with this process's arguments."""
    if sys.argv[1:] == ["worker"]:
        from launcher.worker_program import exec_worker

        exec_worker()
    from launcher.main import app

    app(prog_name="jetspark")
