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
from redis.asyncio.cluster import ClusterNode as AsyncClusterNode
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.cluster import ClusterNode, RedisCluster

from jetspark.settings import RedisSettings

RedisClient: TypeAlias = redis.Redis | RedisCluster
"""What ``connect`` gives: the two share redis-py's command methods."""
AsyncRedisClient: TypeAlias = aioredis.Redis | AsyncRedisCluster

CONTACT_NODES = 16
"""Nodes a cluster URL made by ``url_of`` names, each a first contact if those before it are
gone."""
CLUSTER_RETRIES = 6
"""Times a cluster client re-reads the topology and tries a command again after a node
failed or a slot moved (a failover takes about ``cluster-node-timeout`` plus an election)."""


class _Cluster(RedisCluster):
    """redis-py's cluster client, but one whose default node being lost for good does not
    stop it: redis-py asks its default node for the keys of a command whose keys move
    (``COMMAND GETKEYS``: XREADGROUP, XREAD...) before, and outside, its own failover
    handling, so every such command failed for as long as that node stayed dead (a worker
    could read its queue no more). On such a failure the topology is read afresh, which
    picks a default node among the primaries there are, and the keys are asked again."""

    def _get_command_keys(self, *args: Any) -> Any:
        try:
            return super()._get_command_keys(*args)  # type: ignore[no-untyped-call]
        except (redis.ConnectionError, redis.TimeoutError):
            self.nodes_manager.initialize()
            return super()._get_command_keys(*args)  # type: ignore[no-untyped-call]


class _AsyncCluster(AsyncRedisCluster):
    """The asyncio twin of ``_Cluster``: its parser of commands asks the default node it was
    given at the last topology read."""

    async def _determine_slot(self, command: str, *args: Any) -> int:
        try:
            return await super()._determine_slot(command, *args)
        except (redis.ConnectionError, redis.TimeoutError):
            await self.nodes_manager.initialize()
            await self.commands_parser.initialize(self.nodes_manager.default_node)
            return await super()._determine_slot(command, *args)


def cluster_mode() -> bool:
    """``JETSPARK_REDIS_CLUSTER``: whether the configured Redis is a Redis Cluster."""
    return RedisSettings().cluster


def connect(url: str, *, cluster: bool | None = None, **options: Any) -> RedisClient:
    """A client of the Redis at ``url``; ``cluster`` (default: ``JETSPARK_REDIS_CLUSTER``)
    makes it a cluster client that reaches every node from this one, or from the first of
    several that answers (``redis://h1:p1,h2:p2/0``)."""
    if cluster is None:
        cluster = cluster_mode()
    if cluster:
        options.setdefault(
            "retry", redis.retry.Retry(ExponentialBackoff(1.0, 0.1), CLUSTER_RETRIES)
        )
        first, others = _first_and_others(url)
        if others:
            options["startup_nodes"] = [
                ClusterNode(host, port)  # type: ignore[no-untyped-call]
                for host, port in others
            ]
        return _Cluster.from_url(first, **options)
    return redis.Redis.from_url(url, **options)


def connect_async(url: str, *, cluster: bool | None = None, **options: Any) -> AsyncRedisClient:
    """The asyncio twin of ``connect``. Its reads wait up to 15 s (redis-py's asyncio
    default is 5 s, under a blocking read's own timeout: an SSE stream's XREAD BLOCK)."""
    options.setdefault("socket_timeout", 15)
    if cluster is None:
        cluster = cluster_mode()
    if cluster:
        first, others = _first_and_others(url)
        if others:
            options["startup_nodes"] = [AsyncClusterNode(host, port) for host, port in others]
        return _AsyncCluster.from_url(first, **options)
    return aioredis.Redis.from_url(url, **options)


def _first_and_others(url: str) -> tuple[str, list[tuple[str, int]]]:
    """A cluster URL that may name several nodes (``redis://[auth@]h1:p1,h2:p2/0``): the
    URL of the first (without its database: a cluster has only 0) and the others' addresses,
    each a first contact should the ones before it be gone."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return _without_db(url), []
    netloc, slash, path = rest.partition("/")
    auth, at, hosts = netloc.rpartition("@")
    first, *others = hosts.split(",")
    nodes = []
    for node in others:
        host, colon, port = node.rpartition(":")
        if not colon or not port.isdigit():
            raise ValueError(f"Redis Cluster node {node!r} is not host:port")
        nodes.append((host, int(port)))
    return _without_db(f"{scheme}://{auth}{at}{first}{slash}{path}"), nodes


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
    """A URL that reaches the Redis ``client`` talks to. For a cluster: the nodes it knows,
    its default node first (at most ``CONTACT_NODES``), so that a client made from the URL
    later (a snapshot write, a Spark task) still finds the cluster when a node is lost for
    good."""
    if isinstance(client, RedisCluster):
        default = client.get_default_node()  # type: ignore[no-untyped-call]
        kwargs = client.nodes_manager.connection_kwargs
        nodes = client.get_nodes()  # type: ignore[no-untyped-call]
        known = [default, *(n for n in nodes if n.name != default.name)]
        host = ",".join(f"{n.host}:{n.port}" for n in known[:CONTACT_NODES])
        auth = f":{kwargs['password']}@" if kwargs.get("password") else ""
        return f"redis://{auth}{host}/0"
    kwargs = client.connection_pool.connection_kwargs
    host, port = kwargs.get("host", "127.0.0.1"), kwargs.get("port", 6379)
    auth = f":{kwargs['password']}@" if kwargs.get("password") else ""
    return f"redis://{auth}{host}:{port}/{kwargs.get('db', 0)}"


def _without_db(url: str) -> str:
    """A cluster has database 0 only: ``/0`` is dropped (any other is refused by the node)."""
    head, slash, db = url.rpartition("/")
    if slash and "://" in head and db in ("0", ""):
        return head
    return url
