"""A table read, grouped and written back: ``source.jdbc -> aggregate -> sink.jdbc`` through
the server against the same work hand-written with ``spark.read.jdbc`` / ``df.write.jdbc``.

Run: ``make bench-jdbc`` (``.venv/bin/python -m bench.jdbc [--rows 5000000] [--runs 3]``).
PostgreSQL is the configured one (``JETSPARK_DATABASE_URL``), else an embedded server, as the
other benches have it (``bench.submit_latency.services``); the table ``bench.sales``
(``id BIGINT PRIMARY KEY, k INT, amount BIGINT``, ``--keys`` distinct ``k``) is loaded once
with ``generate_series`` in a fresh database and read through Spark's JDBC source with the
driver jar of ``JETSPARK_JDBC_DRIVER_JARS`` (Debian's ``libpostgresql-jdbc-java``).

jetspark: the job goes through the HTTP API (uvicorn in a thread, real PostgreSQL and Redis)
to a warm worker in this process on the bench's SparkSession (``local[2]``), as
``bench.engine_wordcount --server`` does; it is timed from the POST to the client seeing
COMPLETED (each run's phases, from its view's ``timings``, are printed). Its read is split
on ``id`` over ``local_parallelism x members`` partitions (bounds 1 and rows + 1);
``sum(amount)`` and ``count(*)`` per ``k`` over a partitioned edge; ``sink.jdbc``
``overwrite``: Spark writes a staging table, then one transaction replaces the target's rows
and adds the epoch's marker row (docs/SPEC.md, section 5).

Hand-written: ``spark.read.jdbc`` with the same column, bounds and number of partitions, the
same ``groupBy().agg()``, ``df.write.jdbc(mode="overwrite")``, in the same warm session, at
Spark's default fetch size as a user writes it (``--hand-fetch-size N`` gives it the one
``source.jdbc`` uses by default, 10000, to show what of the ratio that default makes).

One warm-up run of each, then ``--runs`` runs alternating (jetspark, hand-written, ...):
each printed, then the medians and the ratio hand-written / jetspark (>= 0.9 is the aim of
issue 26). Both output tables must hold the same rows, and the rows ``GROUP BY`` gives in
PostgreSQL itself; the bench exits 1 if they do not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from bench.processes import exit_on_sigterm
from bench.submit_latency import fresh_database, services
from jetspark.dag.kinds import DEFAULT_FETCH_SIZE
from jetspark.db.engine import normalize_url
from jetspark.settings import JdbcSettings
from jetspark.spark_session import build_spark_session

CONNECTION = "bench"
PASSWORD_ENV = "JETSPARK_BENCH_JDBC_PASSWORD"
SCHEMA = "bench"
SOURCE = f"{SCHEMA}.sales"
DAG_TABLE, HAND_TABLE = f"{SCHEMA}.totals_jetspark", f"{SCHEMA}.totals_hand"

Rows = list[tuple[int, int, int]]


def load(engine: Engine, rows: int, keys: int) -> float:
    """The source table, ``rows`` rows over ``keys`` keys; seconds it took."""
    started = time.perf_counter()
    with engine.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}"))
        conn.execute(text(f"DROP TABLE IF EXISTS {SOURCE}"))
        conn.execute(
            text(f"CREATE TABLE {SOURCE} (id BIGINT PRIMARY KEY, k INT NOT NULL, amount BIGINT)")
        )
        conn.execute(
            text(
                f"INSERT INTO {SOURCE} SELECT g, (g * 7919) % :keys, g % 1000 - 100"
                " FROM generate_series(CAST(1 AS BIGINT), :rows) g"  # g * 7919 passes 2^31
            ),
            {"keys": keys, "rows": rows},
        )
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text(f"VACUUM ANALYZE {SOURCE}"))
    return time.perf_counter() - started


def job_body(rows: int, members: int, local_parallelism: int) -> dict[str, Any]:
    return {
        "name": "bench-jdbc",
        "dag": {
            "vertices": [
                {"name": "read", "processor": "source.jdbc",
                 "params": {"connection": CONNECTION, "table": SOURCE,
                            "columns": ["id", "k", "amount"], "partition_column": "id",
                            "lower_bound": 1, "upper_bound": rows + 1}},
                {"name": "totals", "processor": "aggregate",
                 "params": {"key": "k",
                            "aggregations": {"total": "sum(amount)", "n": "count(*)"}}},
                {"name": "write", "processor": "sink.jdbc",
                 "params": {"connection": CONNECTION, "table": DAG_TABLE, "mode": "overwrite"}},
            ],
            "edges": [
                {"from": "read", "to": "totals", "routing": "partitioned", "key": "k"},
                {"from": "totals", "to": "write"},
            ],
        },
        "config": {"members": members, "local_parallelism": local_parallelism},
    }  # fmt: skip


def hand_written(
    spark: SparkSession,
    url: str,
    properties: dict[str, str],
    rows: int,
    partitions: int,
    fetch_size: int | None = None,
) -> None:
    """The same work as the DAG, as a Spark user writes it."""
    fetch = {} if fetch_size is None else {"fetchsize": str(fetch_size)}
    sales = spark.read.jdbc(
        url,
        SOURCE,
        column="id",
        lowerBound=1,
        upperBound=rows + 1,
        numPartitions=partitions,
        properties={**properties, **fetch},
    )
    totals = sales.groupBy(F.col("k").alias("key")).agg(
        F.sum("amount").alias("total"), F.count(F.lit(1)).alias("n")
    )
    totals.write.jdbc(url, HAND_TABLE, mode="overwrite", properties=properties)


def table_rows(engine: Engine, query: str) -> Rows:
    with engine.connect() as conn:
        return [(int(k), int(t), int(n)) for k, t, n in conn.execute(text(query))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3, help="runs of each, alternating")
    parser.add_argument("--local-parallelism", type=int, default=2)
    parser.add_argument("--members", type=int, default=1)
    parser.add_argument(
        "--hand-fetch-size", type=int, default=None, help="hand-written's JDBC fetchsize"
    )
    args = parser.parse_args()
    exit_on_sigterm()
    if not any(Path(jar).is_file() for jar in JdbcSettings().driver_jars):
        print("no PostgreSQL JDBC driver: `make jdbc-driver` installs it", file=sys.stderr)
        return 2
    with (
        tempfile.TemporaryDirectory(prefix="jetspark-bench-jdbc-") as home,
        services(Path(home)) as (server, redis_url),
    ):
        database = fresh_database(server)
        url = make_url(normalize_url(database))
        engine = create_engine(url)
        try:
            took = load(engine, args.rows, args.keys)
            print(f"loaded {args.rows:,} rows over {args.keys} keys in {took:.1f} s", flush=True)
            jdbc_url = (
                f"jdbc:postgresql://{url.host or '127.0.0.1'}:{url.port or 5432}/{url.database}"
            )
            properties = {"user": url.username or "postgres", "driver": "org.postgresql.Driver"}
            connection: dict[str, Any] = {
                "url": jdbc_url,
                "user": properties["user"],
                "principals": ["*"],
            }
            if url.password:
                os.environ[PASSWORD_ENV] = properties["password"] = url.password
                connection["password_env"] = PASSWORD_ENV
            # Read by the API when it starts and by the worker when each job starts.
            os.environ["JETSPARK_JDBC_CONNECTIONS"] = json.dumps({CONNECTION: connection})
            return compare(args, engine, database, redis_url, jdbc_url, properties)
        finally:
            engine.dispose()


def compare(
    args: argparse.Namespace,
    engine: Engine,
    database: str,
    redis_url: str,
    jdbc_url: str,
    properties: dict[str, str],
) -> int:
    from api.app import create_app
    from bench.engine_wordcount import phases
    from bench.latency import TOKEN, run_once, warm_worker
    from jetspark.settings import ApiSettings
    from tests.live_server import live_server

    partitions = args.local_parallelism * args.members
    spark = build_spark_session(master="local[2]", app_name="jetspark-bench-jdbc")
    spark.sparkContext.setLogLevel("ERROR")
    namespace = f"bench-jdbc-{uuid.uuid4().hex[:6]}"
    app = create_app(
        database_url=database,
        redis_url=redis_url,
        redis_namespace=namespace,
        api_settings=ApiSettings(tokens=[TOKEN]),
    )
    body = job_body(args.rows, args.members, args.local_parallelism)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with (
            live_server(app) as api_url,
            httpx.Client(base_url=api_url, headers=headers, timeout=3600) as http,
            warm_worker(spark, database, redis_url, namespace, 1),
        ):

            def through_server() -> None:
                _, view = run_once(http, body)
                print("  jetspark run:", phases(view.get("timings") or {}), flush=True)

            work: dict[str, Callable[[], Any]] = {
                "jetspark": through_server,
                "hand-written": lambda: hand_written(
                    spark, jdbc_url, properties, args.rows, partitions, args.hand_fetch_size
                ),
            }
            seconds: dict[str, list[float]] = {name: [] for name in work}
            for name, perform in work.items():
                started = time.perf_counter()
                perform()  # warm-up: the worker's first job, the driver's classes
                print(f"warm-up {name:12} {time.perf_counter() - started:7.2f} s", flush=True)
            for run in range(1, args.runs + 1):
                for name, perform in work.items():
                    started = time.perf_counter()
                    perform()
                    seconds[name].append(time.perf_counter() - started)
                    took = seconds[name][-1]
                    rate = args.rows / took / 1e6
                    print(
                        f"run {run} {name:12} {took:7.2f} s  {rate:5.2f} M rows/s",
                        flush=True,
                    )
    finally:
        spark.stop()
    dag, hand = (statistics.median(seconds[n]) for n in ("jetspark", "hand-written"))
    print(
        f"\n{args.rows:,} rows, {args.keys} keys, {partitions} read partitions "
        f"(local_parallelism {args.local_parallelism} x members {args.members}), "
        f"{args.runs} runs each, alternating; fetch size: jetspark {DEFAULT_FETCH_SIZE} "
        f"(its default), hand-written {args.hand_fetch_size or 'Spark default'}"
    )
    print(f"  jetspark      median {dag:7.2f} s  {args.rows / dag / 1e6:5.2f} M rows/s")
    print(f"  hand-written  median {hand:7.2f} s  {args.rows / hand / 1e6:5.2f} M rows/s")
    print(f"  ratio hand-written / jetspark (of medians): {hand / dag:.2f} (aim >= 0.9)")
    expected = table_rows(
        engine, f"SELECT k, SUM(amount), COUNT(*) FROM {SOURCE} GROUP BY k ORDER BY k"
    )
    got = {
        name: table_rows(engine, f"SELECT key, total, n FROM {table} ORDER BY key")
        for name, table in (("jetspark", DAG_TABLE), ("hand-written", HAND_TABLE))
    }
    same = got["jetspark"] == got["hand-written"] == expected
    total = sum(Decimal(t) for _, t, _ in expected)
    print(
        f"  outputs: jetspark {len(got['jetspark'])} rows, hand-written "
        f"{len(got['hand-written'])} rows, PostgreSQL's GROUP BY {len(expected)} rows "
        f"(sum {total}): {'equal' if same else 'DIFFERENT'}"
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
