"""Ship what a worker's Python tasks import to a cluster's executors, at the worker's start.

Executors then need only Python (the worker's minor version) with pyarrow and pandas: the
engine (``worker.engine``), ``jetspark`` and the allowed processor modules travel with the
worker, and so do the libraries they import (pydantic, mmh3, ...), compiled parts included.

Which modules: a fresh interpreter imports the entry points and reports every top-level
module that is neither the standard library nor what executors have. How: each top-level
package becomes an archive unpacked under its own name in the executors' SparkFiles
directory, each single-file module a file there; PySpark puts that directory on the Python
workers' path. (``addPyFile`` zips cannot carry compiled extensions: zipimport refuses them.)
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from jetspark.settings import DagLimits, SparkSettings
from jetspark.spark_conf import SparkConfError, is_local

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger("jetspark.worker")

ENTRY_MODULES = ("worker.engine", "jetspark.processor", "jetspark.example_processors")
"""What Spark's Python tasks unpickle functions and classes from."""

PROVIDED = frozenset(
    {"pyspark", "py4j", "pyarrow", "pandas", "numpy", "dateutil", "pytz", "tzdata", "six"}
)
"""What every executor has: PySpark's own modules, pyarrow, pandas and their dependencies."""

_NOT_CODE = frozenset({"__main__", "_distutils_hack", "site", "sitecustomize", "usercustomize"})

_REPORT = """
import importlib, json, sys, sysconfig
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ImportError as error:  # an allowed module this worker lacks: jobs using it fail
        print(f"not shipped: {name}: {error}", file=sys.stderr)
stdlib = sysconfig.get_paths()["stdlib"] + "/"
found = set()
for name, module in list(sys.modules.items()):
    where = getattr(module, "__file__", None) or next(iter(getattr(module, "__path__", [])), None)
    if where and (not where.startswith(stdlib) or "-packages/" in where):
        found.add(name.split(".")[0])
print(json.dumps(sorted(found)))
"""


class ShippingError(RuntimeError):
    """The executors' code could not be gathered; the message is one line."""


@dataclass(frozen=True)
class Shipment:
    """One top-level module for the executors: an archive to unpack as ``name``, or a file."""

    name: str
    path: Path
    archive: bool


def imported_modules(entries: Iterable[str]) -> list[str]:
    """Top-level modules a fresh interpreter has loaded once it imported ``entries``."""
    # A fresh interpreter: the worker has also loaded what only the driver needs (SQL, HTTP).
    done = subprocess.run(
        [sys.executable, "-c", _REPORT, *entries],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ShippingError(f"could not list the executors' modules: {last}")
    for line in done.stderr.splitlines():
        if line.startswith("not shipped: "):
            log.warning("allowed module not importable here", detail=line)
    names: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return names


def to_ship(names: Iterable[str]) -> list[str]:
    """Leave out the standard library, what executors have and interpreter hooks."""
    return sorted(
        name
        for name in names
        if name not in sys.stdlib_module_names
        and name not in sys.builtin_module_names
        and name not in PROVIDED
        and name not in _NOT_CODE
        and not name.startswith("__editable__")
    )


def locate(name: str) -> tuple[list[Path], Path | None]:
    """A top-level module's package directories (a namespace package may have several), or
    its single file."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ShippingError(f"module {name!r} is imported but cannot be found")
    if spec.submodule_search_locations:
        return [Path(p) for p in spec.submodule_search_locations], None
    if spec.origin is None or not Path(spec.origin).is_file():
        raise ShippingError(f"module {name!r} has no file to ship ({spec.origin})")
    return [], Path(spec.origin)


def _package_files(directories: list[Path]) -> Iterator[tuple[Path, str]]:
    for directory in directories:
        for path in sorted(directory.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                yield path, path.relative_to(directory).as_posix()


def bundle(names: Iterable[str], into: Path) -> list[Shipment]:
    """Archives of the packages and the single-file modules, ready for ``ship``."""
    into.mkdir(parents=True, exist_ok=True)
    shipments = []
    for name in names:
        directories, single = locate(name)
        if single is not None:
            shipments.append(Shipment(name, single, archive=False))
            continue
        archive = into / f"{name}.zip"
        # Fast compression: these go over the cluster's network once per executor.
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as out:
            seen: set[str] = set()
            for path, arcname in _package_files(directories):
                if arcname not in seen:
                    seen.add(arcname)
                    out.write(path, arcname)
        shipments.append(Shipment(name, archive, archive=True))
    return shipments


def ship(spark: SparkSession, shipments: Iterable[Shipment]) -> None:
    """Hand each shipment to Spark; executors fetch them before their next task."""
    context = spark.sparkContext
    for shipment in shipments:
        if shipment.archive:
            context.addArchive(f"{shipment.path}#{shipment.name}")
        else:
            context.addFile(str(shipment.path))


def ship_executor_code(spark: SparkSession, allowed_modules: Iterable[str], into: Path) -> int:
    """Gather and ship the engine, ``jetspark``, the allowed processor modules and their
    libraries; returns the bytes shipped."""
    entries = [*ENTRY_MODULES, *allowed_modules]
    shipments = bundle(to_ship(imported_modules(entries)), into)
    ship(spark, shipments)
    return sum(os.path.getsize(s.path) for s in shipments)


def ship_if_needed(session: SparkSession, settings: SparkSettings) -> None:
    """The executors get the engine and the allowed processor modules from this worker, when
    ``settings`` ship code (by default: when the master is not local). A failure stops the
    session and is a ``SparkConfError``."""
    if not (
        settings.ship_code if settings.ship_code is not None else not is_local(settings.master)
    ):
        return
    into = Path(tempfile.mkdtemp(prefix="jetspark-executor-code-"))
    # Spark serves the files from here for the session's life: removed at exit.
    atexit.register(shutil.rmtree, into, ignore_errors=True)
    started = time.monotonic()
    try:
        size = ship_executor_code(session, DagLimits().allowed_python_modules, into)
    except (ShippingError, OSError) as error:
        session.stop()
        raise SparkConfError(f"the executors' code could not be shipped: {error}") from None
    log.info(
        "executor code shipped",
        megabytes=round(size / 1e6, 1),
        seconds=round(time.monotonic() - started, 2),
    )
