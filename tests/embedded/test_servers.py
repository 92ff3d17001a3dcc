"""The embedded servers are real, keep their data and their URL across a restart."""

from __future__ import annotations

from pathlib import Path

import psycopg
import redis

from jetspark.embedded.postgres import EmbeddedPostgres, remove_data
from jetspark.embedded.redis import EmbeddedRedis


def test_postgres_keeps_rows_and_url_across_restart(tmp_path: Path) -> None:
    server = EmbeddedPostgres(tmp_path / ".jetspark" / "pg")
    url = server.start()
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (v text)")
            conn.execute("INSERT INTO kept VALUES ('survives')")
        server.stop()
        assert EmbeddedPostgres(tmp_path / ".jetspark" / "pg").start() == url
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT v FROM kept").fetchall() == [("survives",)]
    finally:
        server.stop()
        remove_data(tmp_path / ".jetspark" / "pg")


def test_valkey_has_streams_groups_autoclaim_and_persists(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis")
    url = server.start()
    try:
        client = redis.Redis.from_url(url, decode_responses=True)
        entry = client.xadd("jobs", {"job_id": "1"})
        client.xgroup_create("jobs", "workers", id="0")
        assert client.xreadgroup("workers", "a", {"jobs": ">"}) == [
            ["jobs", [(entry, {"job_id": "1"})]]
        ]
        _, claimed, _ = client.xautoclaim("jobs", "workers", "b", 0, "0-0")
        assert [e for e, _ in claimed] == [entry]
        server.stop()
        server.start()
        assert redis.Redis.from_url(url, decode_responses=True).xlen("jobs") == 1
    finally:
        server.stop()
