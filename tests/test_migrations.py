"""Alembic upgrade and downgrade on a real PostgreSQL server, in a database of their own."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, inspect, text

from jetspark.db.base import Base
from jetspark.db.engine import normalize_url
from jetspark.db.migrate import downgrade, upgrade
from tests.databases import fresh_database

TABLES = {
    "jobs",
    "job_transitions",
    "job_result_pages",
    "snapshots",
    "lifecycle_requests",
    "webhook_deliveries",
    "workers",
}
VIEWS = {"job_results"}


@pytest.fixture
def empty_database_url(server_database_url: str) -> Iterator[str]:
    """A database with nothing in it, dropped afterwards."""
    with fresh_database(server_database_url, "jetspark_migrate", migrated=False) as url:
        yield url


def _schema(url: str) -> tuple[set[str], set[str], str | None]:
    """Tables, indexes and the Alembic revision of the database at ``url``."""
    engine = create_engine(normalize_url(url))
    try:
        inspector = inspect(engine)
        tables = set(inspector.get_table_names())
        indexes = {
            index["name"]
            for table in tables - {"alembic_version"}
            for index in inspector.get_indexes(table)
            if index["name"]
        }
        revision = None
        if "alembic_version" in tables:
            with engine.connect() as conn:
                revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        return tables, indexes, revision
    finally:
        engine.dispose()


def test_upgrade_downgrade_upgrade(empty_database_url: str) -> None:
    url = empty_database_url
    assert _schema(url)[0] == set()

    upgrade(url, "head")
    tables, indexes, revision = _schema(url)
    assert tables == TABLES | {"alembic_version"}
    assert {"ix_jobs_status", "ix_jobs_created_at_id", "ix_snapshots_job_id_snapshot_id"} <= indexes
    assert revision == revision_of_head(url)
    # The migrations and the models agree on the tables and views they define.
    assert set(Base.metadata.tables) == TABLES | VIEWS
    assert set(inspect_views(url)) == VIEWS

    downgrade(url, "base")
    tables, indexes, gone = _schema(url)
    assert tables <= {"alembic_version"}, "downgrade to base left tables behind"
    assert indexes == set() and gone is None

    upgrade(url, "head")
    tables, _, again = _schema(url)
    assert tables == TABLES | {"alembic_version"} and again == revision


def revision_of_head(url: str) -> str:
    from alembic.script import ScriptDirectory

    from jetspark.db.migrate import alembic_config

    head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
    assert head is not None
    return head


def inspect_views(url: str) -> list[str]:
    engine = create_engine(normalize_url(url))
    try:
        return inspect(engine).get_view_names()
    finally:
        engine.dispose()


def test_records_stored_before_pages_are_kept_both_ways(empty_database_url: str) -> None:
    """Records stored a row each (0009) read the same through the view after 0010, and are
    a row each again after its downgrade."""
    url = empty_database_url
    upgrade(url, "0009")
    engine = create_engine(normalize_url(url))
    job_id = uuid.uuid4()
    records = [(0, "a", {"n": 0}), (1, "b", {"s": "x\\ty"}), (2, "a", {"n": [1, None]})]
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO jobs (id, name, principal, definition, status, attempt, version,"
                    " fencing_token, items_in, items_out)"
                    " VALUES (:id, 'old', 'alice', '{}', 'COMPLETED', 1, 1, 0, 3, 3)"
                ),
                {"id": job_id},
            )
            for seq, vertex, item in records:
                conn.execute(
                    text("INSERT INTO job_results VALUES (:job_id, :seq, :vertex, :item)"),
                    {"job_id": job_id, "seq": seq, "vertex": vertex, "item": json.dumps(item)},
                )
        read = text("SELECT seq, vertex, item FROM job_results WHERE job_id = :id ORDER BY seq")
        upgrade(url, "head")
        with engine.connect() as conn:
            assert [tuple(r) for r in conn.execute(read, {"id": job_id})] == records
        downgrade(url, "0009")
        with engine.connect() as conn:
            assert [tuple(r) for r in conn.execute(read, {"id": job_id})] == records
    finally:
        engine.dispose()
