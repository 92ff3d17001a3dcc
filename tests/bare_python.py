"""A Python for executors with nothing but pyarrow and pandas: no jetspark, no pydantic, no mmh3.

Built once per set of versions (the same Python minor version as the worker, as PySpark
requires, and the worker's pyarrow/pandas/numpy versions) and kept under the pytest cache.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

EXECUTOR_PACKAGES = ("pyarrow", "pandas", "numpy")
"""What PySpark's Python workers need for jetspark's Arrow tasks; pandas brings its own
dependencies (python-dateutil, pytz, tzdata, six)."""


def cache_key() -> str:
    pins = "-".join(f"{name}{version(name)}" for name in EXECUTOR_PACKAGES)
    return f"py{sys.version_info.major}.{sys.version_info.minor}-{pins}"


def bare_python(cache: Path) -> Path:
    """The interpreter of the bare venv under ``cache``, built if missing."""
    home = cache / cache_key()
    python = home / "bin" / "python"
    done = home / ".complete"
    if done.exists() and python.exists():
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(home)], check=True, timeout=120)
    pins = [f"{name}=={version(name)}" for name in EXECUTOR_PACKAGES]
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *pins],
        check=True,
        timeout=600,
        capture_output=True,
    )
    done.touch()
    return python


def lacks(python: Path, module: str, cwd: Path) -> bool:
    """``module`` cannot be imported by ``python`` (run in ``cwd``, off the project tree)."""
    probe = subprocess.run(
        [str(python), "-c", f"import {module}"], cwd=cwd, capture_output=True, timeout=60
    )
    return probe.returncode != 0
