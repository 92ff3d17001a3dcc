"""Alembic environment: runs migrations online against the configured URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool

from jetspark.db import tables  # noqa: F401  (registers the tables on Base.metadata)
from jetspark.db.base import Base
from jetspark.db.engine import normalize_url

config = context.config


def run_migrations_online() -> None:
    url = normalize_url(config.get_main_option("sqlalchemy.url") or "")
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=Base.metadata)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


run_migrations_online()
