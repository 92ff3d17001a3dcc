"""Production entry points: ``jetspark api``, ``jetspark worker``, ``jetspark migrate``."""

from __future__ import annotations

from typing import Annotated

import typer

from jetspark.cli.errors import CliError, first_line
from jetspark.cli.preflight import require_free_port, require_settings
from jetspark.settings import DatabaseSettings, RedisSettings
from launcher.worker_program import exec_worker

APP_FACTORY = "api.app:create_app"


def api(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port.")] = 8000,
    workers: Annotated[
        int,
        typer.Option(
            "--workers", min=1, max=64, help="API processes sharing the port (one per core)."
        ),
    ] = 1,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn's log level.")] = "info",
) -> None:
    """Serve the HTTP API (uvicorn with the app factory), in one or several processes.

    Processes (here or on other hosts) share PostgreSQL and Redis: rate limits and quotas
    are counted in Redis, every process hears every job change by PostgreSQL NOTIFY, and
    webhook deliveries are claimed once (docs/ARCHITECTURE.md, "Several API processes").
    """
    import uvicorn

    require_settings(DatabaseSettings().url, RedisSettings().url)
    require_free_port(host, port)
    # uvicorn handles SIGTERM/SIGINT itself: it stops accepting, finishes requests, runs the
    # app's shutdown (closing the LISTEN connection and the pools) and returns; with several
    # workers its supervisor does that for each and starts again one that died.
    uvicorn.run(
        APP_FACTORY, factory=True, host=host, port=port, workers=workers, log_level=log_level
    )


def worker() -> None:
    """Run a worker: a long-lived PySpark driver taking jobs until SIGTERM or Ctrl-C."""
    require_settings(DatabaseSettings().url, RedisSettings().url)
    exec_worker()


def migrate(
    revision: Annotated[
        str, typer.Option("--revision", help="Alembic revision to upgrade to.")
    ] = "head",
) -> None:
    """Upgrade the database schema (JETSPARK_DATABASE_URL) to a revision."""
    url = DatabaseSettings().url
    if not url:
        raise CliError("set JETSPARK_DATABASE_URL to the PostgreSQL to migrate")
    from jetspark.db.migrate import upgrade

    try:
        upgrade(url, revision)
    except Exception as error:  # alembic and the driver raise many kinds; one line for each
        raise CliError(f"migration to {revision} failed: {first_line(str(error))}") from None
    typer.echo(f"database at revision {revision}")
