"""The ``jetspark`` console script (and ``python -m launcher``).

``jetspark worker`` is handed to the worker before the CLI is imported: the CLI's client
side (the SDK, httpx, the DAG model) costs seconds of CPU, and a worker started to replace
one that died spends them on the cores where another worker is resuming the dead one's
stream (see ``worker.main``). Every other command goes to the CLI (``launcher.main``).
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run ``jetspark`` with this process's arguments."""
    if sys.argv[1:] == ["worker"]:
        from jetspark.cli.errors import CliError
        from launcher.servers import worker

        try:
            worker()  # execs the worker: returns only by an error
        except CliError as error:
            print(f"error: {error.message}", file=sys.stderr)
            raise SystemExit(error.exit_code) from None
        return
    from launcher.main import app

    app(prog_name="jetspark")
