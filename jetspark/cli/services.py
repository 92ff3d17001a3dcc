"""The PostgreSQL and Redis ``jetspark up`` uses: the configured ones, else embedded servers."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

import redis

from jetspark.cli.errors import CliError, first_line
from jetspark.embedded.postgres import EmbeddedPostgres
from jetspark.embedded.redis import EmbeddedRedis
from jetspark.redis_client import connect


@dataclass
class Services:
    """URLs of both servers, and the embedded ones started here (stopped in reverse order)."""

    database_url: str = ""
    redis_url: str = ""
    started: list[EmbeddedPostgres | EmbeddedRedis] = field(default_factory=list)

    def describe(self) -> str:
        embedded = {type(server) for server in self.started}
        postgres = "embedded" if EmbeddedPostgres in embedded else "JETSPARK_DATABASE_URL"
        redis = "embedded" if EmbeddedRedis in embedded else "JETSPARK_REDIS_URL"
        return f"PostgreSQL {postgres}, Redis {redis}"

    def stop(self) -> None:
        """Stop the embedded servers; their data stays on disk for the next run."""
        while self.started:
            server = self.started.pop()
            with contextlib.suppress(Exception):  # stopping: one failure must not keep another up
                _stop(server)


def _stop(server: EmbeddedPostgres | EmbeddedRedis) -> None:
    if isinstance(server, EmbeddedRedis) and server.process is None and server.port is not None:
        # Found running (left by a run that was killed) and reused: not our child, so ask it
        # to shut down (it writes its append-only file first).
        with contextlib.suppress(redis.RedisError):
            connect(server.url, cluster=False, socket_timeout=5).shutdown()
        return
    server.stop()


def start_postgres(services: Services, home: Path, configured: str | None) -> None:
    if configured:
        services.database_url = configured
        return
    data = home / "postgres"
    server = EmbeddedPostgres(data)
    try:
        services.database_url = server.start()
    except (RuntimeError, TimeoutError, OSError) as error:
        server.stop()
        raise CliError(
            f"embedded PostgreSQL did not start: {first_line(str(error))} "
            f"(see {data / 'server.log'})"
        ) from None
    services.started.append(server)


def start_redis(services: Services, home: Path, configured: str | None) -> None:
    if configured:
        services.redis_url = configured
        return
    data = home / "redis"
    server = EmbeddedRedis(data)
    try:
        services.redis_url = server.start()
    except (RuntimeError, TimeoutError, OSError) as error:
        server.stop()
        raise CliError(
            f"embedded Valkey did not start: {first_line(str(error))} (see {data / 'server.log'})"
        ) from None
    services.started.append(server)
