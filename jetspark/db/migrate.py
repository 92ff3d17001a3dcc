"""Run Alembic migrations programmatically (``jetspark migrate`` and the test fixtures)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

import migrations

MIGRATIONS_DIR = Path(migrations.__file__).resolve().parent


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)
