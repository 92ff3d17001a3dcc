"""Per-principal counts of things held open (event streams), bounded by a quota.

``ConnectionSlots`` counts in this process. ``SharedConnectionSlots`` counts across every API
process through Redis: each open stream is a member of its principal's sorted set, scored by
when its lease ends; the process holding it renews the lease every ``lease_s / 3``, so the
streams of a process that died stop counting within ``lease_s``. While Redis cannot be
reached, a process counts its own streams only (a principal may then hold up to the quota in
each process): streams stay available rather than all refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import uuid
from collections import Counter
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

import redis
import structlog

from jetspark.queue.keys import Keys
from jetspark.redis_client import AsyncRedisClient
from jetspark.retry import OutageLog

log = structlog.get_logger("jetspark.quotas")

LEASE_S = 30.0
"""How long a stream counts after its holder last renewed it."""

ACQUIRE = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
"""
"""KEYS[1]: the principal's streams; ARGV: member, lease ms, quota. 1 if taken."""

RENEW = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local lease = tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], lease)
return 1
"""
"""KEYS[1]: the principal's streams; ARGV: lease ms, members still held. ``XX``: a member
released meanwhile is not brought back."""


class ConnectionSlots:
    """How many of something each principal holds now; ``limit`` 0 means no limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held: Counter[str] = Counter()
        self.lock = threading.Lock()

    def acquire(self, name: str) -> bool:
        """Take a slot for ``name``; False (nothing taken) when it holds ``limit`` already."""
        with self.lock:
            if self.limit and self.held[name] >= self.limit:
                return False
            self.held[name] += 1
            return True

    def release(self, name: str) -> None:
        with self.lock:
            self.held[name] -= 1
            if self.held[name] <= 0:
                del self.held[name]  # bounded: only principals holding slots are kept


@dataclass(frozen=True)
class Slot:
    """One stream's place in its principal's quota."""

    principal: str
    member: str | None
    """Its member in Redis; None when it is counted in this process only."""


class SharedConnectionSlots:
    """Open event streams per principal, counted by every API process together."""

    def __init__(
        self, client: AsyncRedisClient, keys: Keys, limit: int, *, lease_s: float = LEASE_S
    ) -> None:
        self.client = client
        self.keys = keys
        self.limit = limit
        self.lease_ms = int(lease_s * 1000)
        self.local = ConnectionSlots(limit)
        """This process's streams, shared or not: the whole count while Redis is away."""
        self.members: dict[str, set[str]] = {}
        """Members this process holds in Redis, by principal: what the renewal renews."""
        self.acquire_script: Any = client.register_script(ACQUIRE)
        self.renew_script: Any = client.register_script(RENEW)
        self.tasks: set[asyncio.Task[Any]] = set()
        self.renewal: asyncio.Task[None] | None = None
        self.outage = OutageLog("shared event-stream quota (counted per process meanwhile)", log)

    async def acquire(self, principal: str) -> Slot | None:
        """A slot for ``principal``, or None when it holds its quota already."""
        if not self.local.acquire(principal):
            return None
        if not self.limit:
            return Slot(principal, None)
        member = uuid.uuid4().hex
        try:
            taken = await self.acquire_script(
                keys=[self.keys.event_streams(principal)],
                args=[member, self.lease_ms, self.limit],
            )
        except (redis.RedisError, OSError) as error:
            self.outage.failed(error)
            return Slot(principal, None)
        self.outage.recovered()
        if not int(taken):
            self.local.release(principal)
            return None
        self.members.setdefault(principal, set()).add(member)
        return Slot(principal, member)

    def release(self, slot: Slot) -> None:
        """Give ``slot`` back. Synchronous (it runs where a closed stream is being torn down
        and every await would be cancelled): the shared count is decremented by a task."""
        self.local.release(slot.principal)
        if slot.member is None:
            return
        held = self.members.get(slot.principal)
        if held is not None:
            held.discard(slot.member)
            if not held:
                del self.members[slot.principal]
        key = self.keys.event_streams(slot.principal)
        self._spawn(self._remove(key, slot.member))

    async def _remove(self, key: str, member: str) -> None:
        try:
            await self.client.zrem(key, member)
        except (redis.RedisError, OSError) as error:  # its lease runs out instead
            log.warning("event-stream slot not released", key=key, error=str(error)[:200])

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # the app is shutting down: the member's lease runs out instead
            work.close()
            return
        task = loop.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def start(self) -> None:
        """Renew this process's leases every third of a lease, until ``stop``."""
        if self.limit and self.renewal is None:
            self.renewal = asyncio.get_running_loop().create_task(self._renew_forever())

    async def stop(self) -> None:
        for task in (self.renewal, *self.tasks):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self.renewal = None

    async def _renew_forever(self) -> None:
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            await self.renew()

    async def renew(self) -> None:
        """Push the lease of every stream this process holds in Redis one lease on."""
        for principal, members in list(self.members.items()):
            if not members:
                continue
            try:
                await self.renew_script(
                    keys=[self.keys.event_streams(principal)], args=[self.lease_ms, *members]
                )
            except (redis.RedisError, OSError) as error:
                self.outage.failed(error)
                return
        self.outage.recovered()
