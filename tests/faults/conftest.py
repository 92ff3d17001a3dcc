"""Servers of the fault tests' own, so they can be stopped, wiped and restarted mid-test
without touching the session's (or the machine's) PostgreSQL and Redis."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from jetspark.db.engine import normalize_url
from jetspark.db.migrate import upgrade
from jetspark.embedded.postgres import EmbeddedPostgres, remove_data
from jetspark.embedded.process import free_port
from jetspark.embedded.redis import EmbeddedRedis


@dataclass
class OwnRedis:
    """A Valkey this test module started: ``restart_empty`` is a Redis that lost its data."""

    root: Path
    port: int
    server: EmbeddedRedis | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.server = EmbeddedRedis(self.root / "data", port=self.port)
        self.server.start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()

    def restart_empty(self, *, during: Callable[[], None] | None = None) -> None:
        """Stop, delete the data (append-only file included), run ``during`` while it is
        down, start again on the same port."""
        self.stop()
        shutil.rmtree(self.root / "data", ignore_errors=True)
        if during is not None:
            during()
        self.start()


@dataclass
class OwnPostgres:
    """A PostgreSQL this test module started; ``stop``/``start`` keep the data."""

    server: EmbeddedPostgres

    def stop(self) -> None:
        self.server.stop()

    def start(self) -> None:
        self.server.start()


@pytest.fixture(scope="module")
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnRedis]:
    server = OwnRedis(tmp_path_factory.mktemp("own-redis"), free_port())
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def own_postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnPostgres]:
    data = tmp_path_factory.mktemp("own-pg") / "data"
    server = EmbeddedPostgres(data, port=free_port())
    server.start()
    yield OwnPostgres(server)
    server.stop()
    remove_data(data)


@pytest.fixture(scope="module")
def own_database_url(own_postgres: OwnPostgres) -> str:
    """A migrated database on the module's own PostgreSQL (gone with the server's data:
    nothing to drop, and a pooled admin connection would not survive the restarts)."""
    url = make_url(normalize_url(own_postgres.server.url)).set(database="jetspark_faults")
    admin = create_engine(normalize_url(own_postgres.server.url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text('CREATE DATABASE "jetspark_faults"'))
    admin.dispose()
    rendered = url.render_as_string(hide_password=False)
    upgrade(rendered)
    return rendered
