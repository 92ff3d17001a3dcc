"""``GET /v1/partitions``: where a key's partition lives, on one Redis and on a Redis Cluster
(``tests.redis_cluster``), as the nodes themselves report it."""

from __future__ import annotations

from fastapi.testclient import TestClient
from redis.crc import key_slot

from api.app import create_app
from jetspark.queue.keys import Keys
from jetspark.settings import ApiSettings
from tests.api.conftest import TOKEN
from tests.redis_cluster import RedisClusterServers

HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def test_on_one_redis_every_partition_lives_on_it(
    database_url: str, redis_url: str, redis_namespace: str
) -> None:
    app = create_app(
        database_url=database_url,
        redis_url=redis_url,
        redis_namespace=redis_namespace,
        api_settings=ApiSettings(tokens=[TOKEN]),
    )
    with TestClient(app) as http:
        view = http.get("/v1/partitions", params={"key": "hello"}, headers=HEADERS).json()
    port = redis_url.rsplit(":", 1)[1].split("/")[0]
    storage = view["storage"]
    assert storage["hash_tag"] == f"{{p{view['partition_id']}}}"
    assert (storage["cluster"], storage["slot"]) == (False, None)
    assert storage["primary"]["address"].endswith(f":{port}")


def test_on_a_cluster_a_partition_shows_its_slot_primary_and_replicas(
    database_url: str, redis_cluster: RedisClusterServers, redis_namespace: str
) -> None:
    app = create_app(
        database_url=database_url,
        redis_url=redis_cluster.url,
        redis_cluster=True,
        redis_namespace=redis_namespace,
        api_settings=ApiSettings(tokens=[TOKEN]),
    )
    seen: set[str] = set()
    with TestClient(app) as http:
        for key in ("hello", "world", "a", "b", "c", "d", "e", "f"):
            view = http.get("/v1/partitions", params={"key": key}, headers=HEADERS).json()
            pid, storage = view["partition_id"], view["storage"]
            tag = Keys.partition_tag(pid)
            assert storage["cluster"] is True
            assert storage["slot"] == key_slot(tag.encode())
            snapshot_key = Keys(redis_namespace).snapshot_partition(pid, "job", 1)
            primary = redis_cluster.primary_of(snapshot_key)
            assert storage["primary"] == {
                "address": f"127.0.0.1:{primary.port}",
                "id": primary.id,
                "health": "online",
            }
            replicas = {f"127.0.0.1:{r.port}" for r in redis_cluster.replicas_of(primary)}
            assert {r["address"] for r in storage["replicas"]} == replicas and replicas
            seen.add(storage["primary"]["address"])
    assert len(seen) > 1  # partitions spread over the primaries
