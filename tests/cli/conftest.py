"""Helpers for the CLI tests: the live API of tests/api, subprocess environments, polling."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import psutil
import pytest

from api.app import create_app
from jetspark.embedded.postgres import remove_data
from jetspark.settings import ApiSettings
from tests.api.conftest import TOKEN, http, word_count  # noqa: F401  (shared fixtures)
from tests.databases import fresh_database
from tests.live_server import live_server

T = TypeVar("T")

JETSPARK = str(Path(sys.executable).with_name("jetspark"))
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "word-count.json"

# What a test's own settings must not leak into the processes it starts.
_OWN_SETTINGS = (
    "JETSPARK_DATABASE_URL",
    "JETSPARK_REDIS_URL",
    "JETSPARK_REDIS_NAMESPACE",
    "JETSPARK_API_TOKENS",
    "JETSPARK_HOME",
    "JETSPARK_URL",
    "JETSPARK_TOKEN",
)


def process_env(**settings: str) -> dict[str, str]:
    """This environment without any jetspark setting, plus ``settings``."""
    env = {key: value for key, value in os.environ.items() if key not in _OWN_SETTINGS}
    env |= {"PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    return env | settings


def poll(probe: Callable[[], T | None], *, deadline_s: float, what: str, every_s: float = 0.1) -> T:
    """Call ``probe`` until it returns something other than None/False; fail at the deadline."""
    deadline = time.monotonic() + deadline_s
    while True:
        found = probe()
        if found is not None and found is not False:
            return found
        assert time.monotonic() < deadline, f"not within {deadline_s:.0f} s: {what}"
        time.sleep(every_s)  # waiting on other processes, bounded by the deadline


def is_gone(proc: psutil.Process) -> bool:
    """Exited: no such process, or a zombie nobody has collected yet."""
    try:
        return bool(proc.status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


def log_of(path: Path, lines: int = 30) -> str:
    if not path.exists():
        return "(no log)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="session")
def cli_database_url(server_database_url: str) -> Iterator[str]:
    with fresh_database(server_database_url, "jetspark_cli") as url:
        yield url


@pytest.fixture(scope="session")
def cli_namespace(redis_namespace: str) -> str:
    return f"{redis_namespace}-cli"


@pytest.fixture(scope="session")
def api_url(cli_database_url: str, redis_url: str, cli_namespace: str) -> Iterator[str]:
    """A real uvicorn serving the app on the CLI tests' database."""
    app = create_app(
        database_url=cli_database_url,
        redis_url=redis_url,
        redis_namespace=cli_namespace,
        api_settings=ApiSettings(tokens=[TOKEN]),
    )
    with live_server(app) as url:
        yield url


@pytest.fixture
def jetspark_home(tmp_path: Path) -> Iterator[Path]:
    """A fresh home; the embedded PostgreSQL's data is removed afterwards, wherever it lives.

    As root, the data of a home the ``postgres`` user cannot reach lives under
    /var/lib/jetspark/ behind a link: remove that too, or every run leaves 40 MB behind.
    """
    home = tmp_path / ".jetspark"
    yield home
    remove_data(home / "postgres")


# Fixtures of real worker processes; imported last, as that module uses the helpers above.
from tests.cli.worker_processes import (  # noqa: E402, F401
    keys,
    own_database_url,
    sessions,
    start_worker,
)
