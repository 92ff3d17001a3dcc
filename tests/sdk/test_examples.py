"""Every example of ``examples/`` runs (``run_local`` on the session's SparkSession) and gives
the result it promises; its JSON file is what its SDK script emits."""

from __future__ import annotations

import importlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from pyspark.sql import SparkSession

from examples import (
    enrichment,
    kafka_windows,
    redis_streams,
    running_count,
    stream_table_join,
    stream_windows,
    table_etl,
    word_count,
)
from jetspark.queue.keys import Keys
from tests.jdbc.conftest import PASSWORD_ENV, Db
from tests.kafka.broker import kafka_broker
from tests.kafka.test_broker import read_all
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


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Kafka-protocol broker of this module's own (``tests.kafka.broker``): the example's
    topics have fixed names."""
    with kafka_broker(tmp_path_factory.mktemp("kafka") / "tansu.log") as bootstrap:
        yield bootstrap


@pytest.mark.spark
@pytest.mark.timeout(900)  # a first epoch took minutes on a loaded machine
def test_kafka_windows(local: Any, kafka: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Clicks on 3 partitions, then one record per partition in a last window that never
    closes: every window before it comes out once, counted exactly."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    source, target = kafka_windows.SOURCE, kafka_windows.TARGET
    admin = AdminClient({"bootstrap.servers": kafka})
    for future in admin.create_topics([NewTopic(source, 3), NewTopic(target, 1)]).values():
        future.result(timeout=30)
    topics = {LOCAL_PRINCIPAL: [source, target]}
    clusters = {kafka_windows.CLUSTER: {"bootstrap": kafka, "topics": topics}}
    monkeypatch.setenv("JETSPARK_KAFKA_CLUSTERS", json.dumps(clusters))
    base = 1_700_000_000_000
    producer = Producer({"bootstrap.servers": kafka, "enable.idempotence": True})
    clicks = [(f"u{i % 4}", base + i * 50) for i in range(120)]  # windows 0..5
    for i, (user, ts) in enumerate(clicks):
        value = json.dumps({"user": user}).encode()
        producer.produce(source, value=value, partition=i % 3, timestamp=ts)
    end = json.dumps({"user": "end"}).encode()
    for partition in range(3):  # the watermark: base + 6.5 s on every partition
        producer.produce(source, value=end, partition=partition, timestamp=base + 6500)
    assert producer.flush(30) == 0
    expected = Counter((user, ts // 1000 * 1000) for user, ts in clicks)

    def windows() -> list[dict[str, Any]]:
        return [json.loads(value) for _, value in read_all(kafka, target, 1)]

    run = local(kafka_windows, until=lambda _: len(windows()) >= len(expected))
    assert run.cancelled
    got = Counter({(w["key"], w["window_start"]): w["clicks"] for w in windows()})
    assert got == expected
    assert len(windows()) == len(expected)  # each window once
