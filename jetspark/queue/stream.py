"""Announce, read, reclaim and acknowledge job ids on the jobs stream."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import redis

from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient

JOB_FIELD = "job_id"


@dataclass(frozen=True)
class Entry:
    """One stream entry: the stream id and the announced job."""

    entry_id: str
    job_id: uuid.UUID


def ensure_group(client: RedisClient, keys: Keys) -> bool:
    """Create the stream and its consumer group if either is missing (idempotent); True
    when it had to (Redis lost them, or this is the first worker)."""
    try:
        client.xgroup_create(keys.jobs_stream, keys.workers_group, id="0", mkstream=True)
    except redis.ResponseError as error:
        if "BUSYGROUP" not in str(error):
            raise
        return False
    return True


def announce(client: RedisClient, keys: Keys, job_id: uuid.UUID) -> str:
    """Tell workers about a job. Duplicates are harmless: claiming is decided in PostgreSQL."""
    return str(client.xadd(keys.jobs_stream, {JOB_FIELD: str(job_id)}))


def _entries(raw: list[tuple[object, dict[object, object]]]) -> list[Entry]:
    found = []
    for entry_id, fields in raw:
        if not fields:  # deleted entries come back empty
            continue
        value = fields.get(JOB_FIELD) or fields.get(JOB_FIELD.encode())
        text = value.decode() if isinstance(value, bytes) else str(value)
        eid = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
        try:
            found.append(Entry(eid, uuid.UUID(text)))
        except ValueError:
            continue
    return found


def read_new(
    client: RedisClient, keys: Keys, consumer: str, *, count: int, block_ms: int
) -> list[Entry]:
    """New entries for this consumer (XREADGROUP ... >), waiting up to ``block_ms``."""

    def read() -> Any:
        return client.xreadgroup(
            keys.workers_group, consumer, {keys.jobs_stream: ">"}, count=count, block=block_ms
        )

    try:
        reply = read()
    except redis.ResponseError as error:
        if "NOGROUP" not in str(error):
            raise
        ensure_group(client, keys)  # from id 0: entries announced before the group are seen
        reply = read()
    streams: list[Any] = list(reply or [])
    return [e for _, raw in streams for e in _entries(raw)]


def reclaim_idle(
    client: RedisClient, keys: Keys, consumer: str, *, min_idle_ms: int, count: int
) -> list[Entry]:
    """Take entries another consumer has left idle for ``min_idle_ms`` (XAUTOCLAIM)."""
    try:
        reply = client.xautoclaim(
            keys.jobs_stream, keys.workers_group, consumer, min_idle_ms, "0-0", count=count
        )
    except redis.ResponseError as error:
        if "NOGROUP" not in str(error):
            raise
        ensure_group(client, keys)
        return []
    return _entries(reply[1])


def touch(client: RedisClient, keys: Keys, consumer: str, entry_ids: list[str]) -> None:
    """Reset the idle time of entries this consumer still works on (XCLAIM ... JUSTID)."""
    if entry_ids:
        ids: list[Any] = list(entry_ids)
        try:
            client.xclaim(keys.jobs_stream, keys.workers_group, consumer, 0, ids, justid=True)
        except redis.ResponseError as error:
            if "NOGROUP" not in str(error):
                raise
            ensure_group(client, keys)  # Redis lost it: the jobs are held in PostgreSQL


def ack(client: RedisClient, keys: Keys, entry_ids: list[str]) -> None:
    if entry_ids:
        try:
            client.xack(keys.jobs_stream, keys.workers_group, *entry_ids)
        except redis.ResponseError as error:
            if "NOGROUP" not in str(error):
                raise
        client.xdel(keys.jobs_stream, *entry_ids)


def forget_consumer(client: RedisClient, keys: Keys, consumer: str) -> None:
    """Remove a lost worker from the group with its pending entries (XGROUP DELCONSUMER):
    its jobs were queued again and announced anew, so the entries are stale hints."""
    try:
        client.xgroup_delconsumer(keys.jobs_stream, keys.workers_group, consumer)
    except redis.ResponseError as error:
        if "NOGROUP" not in str(error):
            raise
