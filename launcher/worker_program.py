"""``jetspark worker``: become the worker program, with as little imported as can be.

A worker is often started because another died (``jetspark up`` restarts it 0.5 s later),
while the surviving worker resumes the dead one's stream on the same cores: this module
imports nothing of the CLI, and the worker program imports what it needs at low priority
(``worker.main``).
"""

from __future__ import annotations

import os
import sys


def exec_worker() -> None:
    """Become the worker program (``python -m worker.main``): this process, its pid and
    its signals. Java is checked first (one line); the worker checks its settings."""
    from jetspark.cli.errors import CliError
    from jetspark.cli.preflight import find_java

    try:
        find_java()
    except CliError as error:
        print(f"error: {error.message}", file=sys.stderr)
        raise SystemExit(error.exit_code) from None
    # The worker is its own program, started by name from this outer package only
    # (tests/test_layers.py).
    os.execv(sys.executable, [sys.executable, "-m", "worker.main"])
