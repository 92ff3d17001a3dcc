"""Every example of ``examples/`` runs (``run_local`` on the session's SparkSession) and gives
the result it promises; its JSON file is what its SDK script emits."""

from __future__ import annotations

import importlib
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
import redis
from pyspark.sql import SparkSession

from examples import (
    enrichment,
    redis_streams,
    running_count,
    stream_table_join,
    stream_windows,
    table_etl,
    word_count,
)
from jetspark.queue.keys import Keys
from tests.jdbc.conftest import PASSWORD_ENV, Db
from worker.local_run import LOCAL_PRINCIPAL, LocalRun, run_local

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPTS = sorted(p.stem for p in EXAMPLES.glob("*.py") if not p.stem.startswith("_"))


def json_file(script: str) -> Path:
    return EXAMPLES / f"{script.replace('_', '-')}.json"


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_json_file_is_what_the_script_emits(script: str) -> None:
    module = importlib.import_module(f"examples.{script}")
    assert json.loads(json_file(script).read_text()) == module.build().to_json(), (
        f"regenerate: python examples/{script}.py > examples/{json_file(script).name}"
    )


def test_every_json_example_has_its_script_and_the_readme_links_it() -> None:
    assert {p.name for p in EXAMPLES.glob("*.json")} == {json_file(s).name for s in SCRIPTS}
    readme = (EXAMPLES.parent / "README.md").read_text()
    for script in SCRIPTS:
        assert f"examples/{script}.py" in readme and f"examples/{json_file(script).name}" in readme


@pytest.fixture
def local(spark: SparkSession, redis_url: str, redis_namespace: str) -> Any:
    def run(module: Any, **options: Any) -> LocalRun:
        return run_local(
            module.build(), spark=spark, redis_url=redis_url, namespace=redis_namespace, **options
        )

    return run


@pytest.mark.spark
def test_word_count(local: Any) -> None:
    run = local(word_count)
    words = Counter(w for line in word_count.LINES for w in line.split())
    assert {r["key"]: r["count"] for r in run.items("sink")} == words


@pytest.mark.spark
def test_stream_windows_tumbling_and_session_exactly_once(local: Any) -> None:
    run = local(stream_windows)
    clicks = [
        (seq % stream_windows.USERS, seq * 100 + (seq // stream_windows.BURST) * 5000)
        for seq in range(stream_windows.CLICKS)
    ]
    per_second = Counter((user, ts // 1000 * 1000) for user, ts in clicks)
    got = [(r["key"], r["window_start"], r["clicks"]) for r in run.items("per_second_out")]
    assert sorted(got) == sorted((u, start, n) for (u, start), n in per_second.items())
    sessions: dict[int, list[list[int]]] = defaultdict(list)
    for user, ts in sorted(clicks):
        if sessions[user] and ts - sessions[user][-1][-1] < 1000:
            sessions[user][-1].append(ts)
        else:
            sessions[user].append([ts])
    expected = sorted((u, len(s), s[0], s[-1]) for u, ss in sessions.items() for s in ss)
    got_sessions = [
        (r["key"], r["clicks"], r["first"], r["last"]) for r in run.items("sessions_out")
    ]
    assert sorted(got_sessions) == expected  # each window once: none lost, none repeated
    assert run.snapshots >= 1


@pytest.mark.spark
def test_enrichment_hash_join(local: Any) -> None:
    run = local(enrichment)
    products = {p["sku"]: p for p in enrichment.PRODUCTS}
    expected = {
        o["order"]: (products[o["sku"]]["title"], o["qty"] * products[o["sku"]]["price"])
        if o["sku"] in products
        else ("unknown", 0)
        for o in enrichment.ORDERS
    }
    assert {r["order"]: (r["title"], r["total"]) for r in run.items("lines")} == expected


@pytest.mark.spark
def test_running_count_keeps_its_state_in_snapshots(local: Any) -> None:
    run = local(running_count)
    counts: dict[str, list[int]] = defaultdict(list)
    for record in run.items("out"):
        counts[record["key"]].append(record["count"])
    per_key = running_count.EVENTS // running_count.KEYS
    assert {k: sorted(v) for k, v in counts.items()} == {
        f"k{i}": list(range(1, per_key + 1)) for i in range(running_count.KEYS)
    }
    assert run.snapshots >= 1 and run.epochs >= 2  # the counts crossed epochs in snapshots


@pytest.mark.spark
def test_redis_stream_in_redis_stream_out(
    local: Any, redis_client: redis.Redis, redis_namespace: str
) -> None:
    keys = Keys(redis_namespace)
    source = keys.user_stream(LOCAL_PRINCIPAL, "orders")
    out = keys.user_stream(LOCAL_PRINCIPAL, "large-orders")
    redis_client.delete(source, out)
    amounts = [50, 150, 99, 101, 300, 7]
    ids = [
        redis_client.xadd(source, {"customer": f"c{i}", "amount": a}) for i, a in enumerate(amounts)
    ]
    large = [(str(i), a) for i, a in zip(ids, amounts, strict=True) if a > 100]
    run = local(redis_streams, until=lambda _: redis_client.xlen(out) >= len(large))
    assert run.cancelled
    copied: Any = redis_client.xrange(out)
    assert [(f["order_id"], int(f["amount"])) for _, f in copied] == large
    redis_client.delete(source, out)


@pytest.mark.spark
def test_stream_table_join(local: Any) -> None:
    run = local(stream_table_join)
    got = Counter((r["key"], r["value"]) for r in run.items("out"))
    per_sensor = stream_table_join.READINGS // len(stream_table_join.ROOMS)
    assert got == {(k, room): per_sensor for k, room in stream_table_join.ROOMS.items()}
    assert run.snapshots >= 1


@pytest.mark.spark
def test_table_etl(local: Any, db: Db, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example's unqualified tables live in the test's schema (``currentSchema``)."""
    sales = db.table("sales")
    db.run(f"CREATE TABLE {sales} (id BIGINT, region TEXT, amount INT, status TEXT)")
    db.run(
        f"INSERT INTO {sales} SELECT g, 'r' || (g % 5), g % 97,"
        f" CASE WHEN g % 4 = 0 THEN 'refunded' ELSE 'paid' END"
        f" FROM generate_series(1, {table_etl.ROWS}) g"
    )
    warehouse = {
        "url": f"{db.jdbc_url}?currentSchema={db.schema}",
        "user": db.user,
        "password_env": PASSWORD_ENV,
        "principals": [LOCAL_PRINCIPAL],
    }
    monkeypatch.setenv("JETSPARK_JDBC_CONNECTIONS", json.dumps({"warehouse": warehouse}))
    local(table_etl)
    expected = db.rows(
        f"SELECT region, SUM(amount), COUNT(*) FROM {sales} WHERE status = 'paid'"
        " GROUP BY region ORDER BY region"
    )
    got = db.rows(f"SELECT key, total, orders FROM {db.table('sales_by_region')} ORDER BY key")
    assert [tuple(map(str, r)) for r in got] == [tuple(map(str, r)) for r in expected]
