"""The one place jetspark makes Redis clients: one server, or a Redis Cluster.

``JETSPARK_REDIS_CLUSTER=true`` with ``JETSPARK_REDIS_URL`` naming any one node of a cluster
makes every client redis-py's cluster client (``redis.cluster.RedisCluster``, and its asyncio
twin for the API's Server-Sent Events), which finds the other nodes itself and follows
``MOVED``/``ASK`` redirections, failovers and slot migrations. Code that leaves the process
(Spark tasks on executors) is given the flag with the URL (``RedisTarget.cluster``), never
reads the environment.

Keys of one multi-key operation share a slot: the control plane's keys share the hash tag
``{<namespace>}``, a snapshot partition's keys the tag ``{p<partition>}``
(``jetspark.queue.keys``).
"""

from __future__ import annotations

from typing import Any, TypeAlias

import redis
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.cluster import RedisCluster

from jetspark.settings import RedisSettings

RedisClient: TypeAlias = redis.Redis | RedisCluster
"""What ``connect`` gives: the two share redis-py's command methods."""
AsyncRedisClient: TypeAlias = aioredis.Redis | AsyncRedisCluster

CLUSTER_RETRIES = 6
"""Times a cluster client re-reads the topology and tries a command again after a node
failed or a slot moved (a failover takes about ``cluster-node-timeout`` plus an election)."""


def cluster_mode() -> bool:
    """``JETSPARK_REDIS_CLUSTER``: whether the configured Redis is a Redis Cluster."""
    return RedisSettings().cluster


def connect(url: str, *, cluster: bool | None = None, **options: Any) -> RedisClient:
    """A client of the Redis at ``url``; ``cluster`` (default: ``JETSPARK_REDIS_CLUSTER``)
    makes it a cluster client that reaches every node from this one."""
    if cluster is None:
        cluster = cluster_mode()
    if cluster:
        options.setdefault(
            "retry", redis.retry.Retry(ExponentialBackoff(1.0, 0.1), CLUSTER_RETRIES)
        )
        return RedisCluster.from_url(_without_db(url), **options)
    return redis.Redis.from_url(url, **options)


def connect_async(url: str, *, cluster: bool | None = None, **options: Any) -> AsyncRedisClient:
    """The asyncio twin of ``connect``."""
    if cluster is None:
        cluster = cluster_mode()
    if cluster:
        return AsyncRedisCluster.from_url(_without_db(url), **options)
    return aioredis.Redis.from_url(url, **options)


def fail_fast(url: str, *, cluster: bool | None = None, **options: Any) -> RedisClient:
    """A client whose calls fail within a few seconds when Redis is away (redis-py's own
    default is ten retries), so the one retry policy (``jetspark.retry``) decides how to wait,
    and a worker's PostgreSQL work (lease renewals) is not held up behind it. A cluster
    client still follows a failover (``CLUSTER_RETRIES``): that is the cluster working."""
    options.setdefault("decode_responses", True)
    options.setdefault("socket_connect_timeout", 2)
    options.setdefault("socket_timeout", 15)  # above any XREADGROUP BLOCK
    if cluster is None:
        cluster = cluster_mode()
    if not cluster:
        options.setdefault("retry", redis.retry.Retry(ExponentialBackoff(0.2, 0.05), 1))
    return connect(url, cluster=cluster, **options)


def fail_fast_async(
    url: str, *, cluster: bool, timeout_s: float, max_connections: int = 16
) -> AsyncRedisClient:
    """An asyncio client for a request's hot path (the API's shared rate limit and stream
    quota): a call gives up after ``timeout_s`` without retrying, and at most
    ``max_connections`` are open (requests wait up to ``timeout_s`` for one rather than all
    connecting at once: a burst of connects on a busy host took longer than the calls)."""
    options: dict[str, Any] = {
        "decode_responses": True,
        "socket_timeout": timeout_s,
        "socket_connect_timeout": 2 * timeout_s,
    }
    if cluster:
        return connect_async(url, cluster=True, max_connections=max_connections, **options)
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=timeout_s,
        retry=AsyncRetry(NoBackoff(), 0),
        **options,
    )
    return aioredis.Redis.from_pool(pool)


def is_cluster(client: object) -> bool:
    return isinstance(client, RedisCluster | AsyncRedisCluster)


def url_of(client: RedisClient) -> str:
    """A URL that reaches the Redis ``client`` talks to (for a cluster: one of its nodes)."""
    if isinstance(client, RedisCluster):
        node = client.get_default_node()  # type: ignore[no-untyped-call]
        kwargs = client.nodes_manager.connection_kwargs
        host, port, db = node.host, node.port, 0
    else:
        kwargs = client.connection_pool.connection_kwargs
        host, port = kwargs.get("host", "127.0.0.1"), kwargs.get("port", 6379)
        db = kwargs.get("db", 0)
    auth = f":{kwargs['password']}@" if kwargs.get("password") else ""
    return f"redis://{auth}{host}:{port}/{db}"


def _without_db(url: str) -> str:
    """A cluster has database 0 only: ``/0`` is dropped (any other is refused by the node)."""
    head, slash, db = url.rpartition("/")
    if slash and "://" in head and db in ("0", ""):
        return head
    return url
