"""A PostgreSQL database of a test's own, on the session's server, dropped afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from jetspark.db.engine import make_engine, normalize_url
from jetspark.db.migrate import upgrade


@contextmanager
def fresh_database(
    server_database_url: str, prefix: str, *, migrated: bool = True
) -> Iterator[str]:
    """A database of its own (migrated to head unless told not), dropped afterwards.

    Real workers' reconcilers act on every queued job in their database, and other tests leave
    queued jobs behind: a test that runs workers keeps to a database of its own.
    """
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    admin = create_engine(normalize_url(server_database_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(normalize_url(server_database_url)).set(database=name)
    rendered = url.render_as_string(hide_password=False)
    try:
        if migrated:
            upgrade(rendered)
        yield rendered
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def fresh_engine(server_database_url: str, prefix: str, *, pool_size: int) -> Iterator[Engine]:
    """An engine on a ``fresh_database`` of its own, disposed of before the database goes."""
    with fresh_database(server_database_url, prefix) as url:
        engine = make_engine(url, pool_size=pool_size)
        try:
            yield engine
        finally:
            engine.dispose()
