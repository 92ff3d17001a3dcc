"""Where a partition's snapshot state lives: its Redis hash tag, slot and nodes.

The seeds' partition table (271 partitions, each with a primary member and backups) is a
Redis Cluster's slot table: snapshot keys carry ``{p<partition>}`` as their hash tag, so a
partition maps to one slot, and the slot to one primary and its replicas (``CLUSTER
SHARDS``). On a single Redis, every partition lives on it and its replicas.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import redis
from redis.cluster import RedisCluster
from redis.crc import key_slot

from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient


@dataclass(frozen=True)
class StoreNode:
    address: str
    """``host:port`` as the cluster announces it."""
    id: str | None = None
    health: str | None = None
    """``online``, ``failed`` or ``loading`` (``CLUSTER SHARDS``); None on a single Redis."""


@dataclass(frozen=True)
class Placement:
    hash_tag: str
    cluster: bool
    slot: int | None
    """The partition's hash slot (0..16383); None on a single Redis."""
    primary: StoreNode | None
    replicas: list[StoreNode] = field(default_factory=list)


def placement(client: RedisClient, partition: int) -> Placement:
    """Ask the Redis ``client`` talks to where ``partition``'s snapshot state lives now."""
    tag = Keys.partition_tag(partition)
    if not isinstance(client, RedisCluster):
        return Placement(tag, False, None, *_single(client))
    slot = key_slot(tag.encode())
    shards: Any = client.cluster_shards()
    for shard in shards:
        bounds = [int(s) for s in _get(shard, "slots")]
        pairs = zip(bounds[::2], bounds[1::2], strict=True)
        if not any(first <= slot <= last for first, last in pairs):
            continue
        nodes = [_node(n) for n in _get(shard, "nodes")]
        roles = [str(_get(n, "role")) for n in _get(shard, "nodes")]
        primary = next((n for n, r in zip(nodes, roles, strict=True) if r == "master"), None)
        replicas = [n for n, r in zip(nodes, roles, strict=True) if r != "master"]
        return Placement(tag, True, slot, primary, replicas)
    return Placement(tag, True, slot, None, [])  # a slot no node serves: the cluster is down


def _single(client: Any) -> tuple[StoreNode, list[StoreNode]]:
    return StoreNode(address_of(client)), replicas_of(client)


def address_of(client: redis.Redis) -> str:
    """``host:port`` of the one server ``client`` talks to."""
    kwargs = client.connection_pool.connection_kwargs
    return f"{kwargs.get('host', '127.0.0.1')}:{kwargs.get('port', 6379)}"


def replicas_of(client: redis.Redis) -> list[StoreNode]:
    """The replicas connected to the server ``client`` talks to (``INFO replication``),
    each with its state (``online`` once in sync, ``wait_bgsave``/``send_bulk`` before)."""
    info: dict[str, Any] = client.info("replication")
    return [
        StoreNode(f"{v['ip']}:{v['port']}", health=str(v.get("state")))
        for k, v in sorted(info.items())
        if k.startswith("slave") and isinstance(v, dict)
    ]


def online_replicas(client: redis.Redis) -> int:
    """How many replicas of the server ``client`` talks to are in sync: those a ``WAIT``
    can count on."""
    return sum(1 for replica in replicas_of(client) if replica.health == "online")


def _get(mapping: Any, name: str) -> Any:
    """A field of a ``CLUSTER SHARDS`` reply, decoded or not."""
    if name in mapping:
        return mapping[name]
    return mapping.get(name.encode())


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _node(raw: Any) -> StoreNode:
    host = _get(raw, "endpoint") or _get(raw, "ip")
    return StoreNode(
        address=f"{_text(host)}:{_text(_get(raw, 'port'))}",
        id=_text(_get(raw, "id")),
        health=_text(_get(raw, "health")),
    )
