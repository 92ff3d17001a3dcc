"""`jetspark migrate`, and what `api` and `worker` say when they are not configured."""

from __future__ import annotations

import subprocess

import pytest
from sqlalchemy import create_engine, inspect, text
from typer.testing import CliRunner

from jetspark.db.engine import normalize_url
from launcher.main import app
from tests.cli.conftest import JETSPARK, process_env
from tests.databases import fresh_database
from tests.test_migrations import revision_of_head

runner = CliRunner()


def test_migrate_upgrades_an_empty_database_to_head(
    server_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with fresh_database(server_database_url, "jetspark_migrate", migrated=False) as url:
        monkeypatch.setenv("JETSPARK_DATABASE_URL", url)
        first = runner.invoke(app, ["migrate", "--revision", "0001"])
        assert first.exit_code == 0, first.output
        assert first.stdout.strip() == "database at revision 0001"
        again = runner.invoke(app, ["migrate"])  # from 0001 on to head
        assert again.exit_code == 0, again.output
        engine = create_engine(normalize_url(url))
        try:
            with engine.connect() as conn:
                version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            assert version == revision_of_head(url)
            assert {"jobs", "job_transitions"} <= set(inspect(engine).get_table_names())
            assert "metrics" in {c["name"] for c in inspect(engine).get_columns("jobs")}
        finally:
            engine.dispose()


def test_migrate_to_an_unknown_revision_is_one_line(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JETSPARK_DATABASE_URL", database_url)
    result = runner.invoke(app, ["migrate", "--revision", "9999"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: migration to 9999 failed: Can't locate revision identified by '9999'"
    ]


@pytest.mark.parametrize("command", ["api", "worker", "migrate"])
def test_server_commands_name_the_missing_settings(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JETSPARK_DATABASE_URL", raising=False)
    monkeypatch.setenv("JETSPARK_REDIS_URL", "redis://127.0.0.1:1/0")
    result = runner.invoke(app, [command])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: set JETSPARK_DATABASE_URL")


def test_a_worker_with_bad_spark_properties_exits_78_in_one_line() -> None:
    env = process_env(
        JETSPARK_DATABASE_URL="postgresql://127.0.0.1:1/none",
        JETSPARK_REDIS_URL="redis://127.0.0.1:1/0",
        JETSPARK_SPARK_CONF='{"spark.master": "local[1]"}',
    )
    done = subprocess.run(
        [JETSPARK, "worker"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 78
    assert done.stderr.strip().splitlines() == [
        "error: JETSPARK_SPARK_CONF: set spark.master with JETSPARK_SPARK_MASTER, not here"
    ]
