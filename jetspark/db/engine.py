"""Engine and session factory for a PostgreSQL URL."""

from __future__ import annotations

from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session, sessionmaker


def normalize_url(url: str) -> str:
    """Use psycopg 3 for plain ``postgresql://`` URLs."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


CONNECT_TIMEOUT_S = 5
"""A PostgreSQL that does not answer is an outage after this long, not a hang."""


def make_engine(url: str, *, pool_size: int = 10) -> Engine:
    return create_engine(
        normalize_url(url),
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
        pool_timeout=CONNECT_TIMEOUT_S,
        connect_args={"connect_timeout": CONNECT_TIMEOUT_S},
    )


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)
