"""Alembic upgrade and downgrade on a real PostgreSQL server, in a database of their own."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

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
    "snapshot_history",
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


def _version_1_plan(body: dict[str, Any], *, bare: bool) -> dict[str, Any]:
    """A plan as an earlier version stored it: no version, no vertex facts; ``bare``: also
    no params, role, name, config or fingerprint (plans stored before issue 13)."""
    from jetspark.dag.model import JobSpec
    from jetspark.dag.plan import build_plan
    from jetspark.dag.validate import validate_job

    plan = build_plan(validate_job(JobSpec.model_validate(body)), all_to_one_seed=3)
    stored = plan.model_dump(mode="json")
    del stored["version"], stored["runs_in_epochs"]
    for vertex in stored["vertices"]:
        for field in ("bounded", "endless", "needs_event_time", "touches"):
            del vertex[field]
        if bare:
            vertex["params"] = vertex["role"] = None
    if bare:
        for field in ("name", "config", "fingerprint"):
            del stored[field]
    return stored


def test_plans_stored_before_are_upgraded_to_the_one_the_engine_runs(
    empty_database_url: str,
) -> None:
    """0013: every stored plan reads as ``ExecutionPlan`` version 2, its decisions (the drawn
    all-to-one partition, members) kept; a plan it cannot read becomes NULL."""
    from jetspark.dag.plan import PLAN_VERSION, ExecutionPlan

    url = empty_database_url
    upgrade(url, "0012")
    body: dict[str, Any] = {
        "name": "old",
        "dag": {
            "vertices": [
                {"name": "in", "processor": "source.sequence", "params": {"count": None}},
                {"name": "out", "processor": "sink.redis_stream", "params": {"stream": "s"}},
            ],
            "edges": [{"from": "in", "to": "out", "routing": "all_to_one"}],
        },
        "config": {"members": 2},
    }
    broken = {"name": "x", "dag": {"vertices": [{"name": "in", "processor": "gone"}]}}
    rows = {
        uuid.uuid4(): (body, _version_1_plan(body, bare=False)),
        uuid.uuid4(): (body, _version_1_plan(body, bare=True)),
        uuid.uuid4(): (broken, {"vertices": [{"name": "in", "processor": "gone"}]}),
    }
    engine = create_engine(normalize_url(url))
    try:
        with engine.begin() as conn:
            for job_id, (definition, plan) in rows.items():
                conn.execute(
                    text(
                        "INSERT INTO jobs (id, name, principal, definition, plan, status, attempt,"
                        " version, fencing_token, items_in, items_out) VALUES (:id, 'old',"
                        " 'alice', CAST(:d AS jsonb), CAST(:p AS jsonb), 'QUEUED', 1, 1, 0, 0, 0)"
                    ),
                    {"id": job_id, "d": json.dumps(definition), "p": json.dumps(plan)},
                )
        upgrade(url, "head")
        with engine.connect() as conn:
            stored: dict[uuid.UUID, Any] = dict(
                conn.execute(text("SELECT id, plan FROM jobs")).tuples().all()
            )
    finally:
        engine.dispose()
    ids = list(rows)
    assert stored[ids[2]] is None
    for job_id in ids[:2]:
        upgraded = ExecutionPlan.model_validate(stored[job_id])
        kept = rows[job_id][1]
        assert (
            upgraded.version == PLAN_VERSION and upgraded.runs_in_epochs and upgraded.members == 2
        )
        assert upgraded.edges[0].all_to_one_pid == kept["edges"][0]["all_to_one_pid"]
        source, sink = upgraded.vertices
        assert (source.role, source.bounded, source.endless) == ("source", False, True)
        assert sink.touches.redis_names == ["s"] and sink.role == "sink"
        assert upgraded.name == "old" and upgraded.config.members == 2


def test_jobs_naming_the_old_example_processors_package_name_the_new_one(
    empty_database_url: str,
) -> None:
    """0015: a stored job's ``jetspark.processors`` (a ``class``, a ``python:`` partitioner)
    reads ``jetspark.example_processors``, in its definition and its plan, and back on a
    downgrade; a module of the user's own that merely ends so is left alone."""
    url = empty_database_url
    upgrade(url, "0014")
    old = {
        "vertex": {"processor": "python", "params": {"class": "jetspark.processors.enrich:X"}},
        "edge": {"partitioner": "python:jetspark.processors.parts:by_key"},
        "mine": {"class": "myjetspark.processors.enrich:X"},
    }
    engine = create_engine(normalize_url(url))
    job_id = uuid.uuid4()

    def stored() -> tuple[Any, Any]:
        with engine.connect() as conn:
            row = conn.execute(text("SELECT definition, plan FROM jobs")).one()
        return row[0], row[1]

    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO jobs (id, name, principal, definition, plan, status, attempt,"
                    " version, fencing_token, items_in, items_out) VALUES (:id, 'old',"
                    " 'alice', CAST(:d AS jsonb), CAST(:d AS jsonb), 'QUEUED', 1, 1, 0, 0, 0)"
                ),
                {"id": job_id, "d": json.dumps(old)},
            )
        upgrade(url, "0015")
        definition, plan = stored()
        assert definition == plan
        assert definition["vertex"]["params"]["class"] == "jetspark.example_processors.enrich:X"
        assert (
            definition["edge"]["partitioner"] == "python:jetspark.example_processors.parts:by_key"
        )
        assert definition["mine"] == old["mine"]
        downgrade(url, "0014")
        assert stored() == (old, old)
    finally:
        engine.dispose()
