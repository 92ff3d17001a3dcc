"""The request rate limit per principal, shared by every API process through Redis.

GCRA (the generic cell rate algorithm: a token bucket kept as one timestamp) in one Lua
script, one round trip per request (the requests of one event loop turn share it), on
Redis's clock: a principal gets its configured rate
and burst whichever API process, on whichever host, answers it. A bucket's key expires when
the bucket would be full again, so Redis holds only the clients active within one refill.

While Redis cannot be reached the limit is kept per process, in memory (``LocalBuckets``):
with N API processes a principal may get up to N times its rate until Redis is back. The
API stays up rather than refuse every request (docs/SECURITY.md, docs/FAULTS.md). After a
failed call the shared limiter is not asked again for ``FALLBACK_S``, so an outage costs no
request more than one timeout.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

import redis
import structlog

from jetspark.queue.keys import Keys
from jetspark.redis_client import AsyncRedisClient, fail_fast_async
from jetspark.retry import OutageLog

log = structlog.get_logger("jetspark.rate_limit")

FALLBACK_S = 1.0
"""After Redis failed, limit in memory for this long before asking Redis again."""
MAX_REFUSED = 100_000
"""Refusals remembered per process at most."""
TIMEOUT_S = 1.0
"""A call to the shared limiter that takes longer than this (twice as long to connect)
counts as Redis being down."""

GCRA = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000000 + tonumber(now_parts[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local answers = {}
for i, key in ipairs(KEYS) do
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then tat = now end
  local allowed_at = tat + interval - burst * interval
  if allowed_at > now then
    answers[2 * i - 1] = 0
    answers[2 * i] = allowed_at - now
  else
    local new_tat = tat + interval
    redis.call('SET', key, string.format('%.0f', new_tat), 'PX',
               math.ceil((new_tat - now) / 1000) + 1)
    answers[2 * i - 1] = 1
    answers[2 * i] = 0
  end
end
return answers
"""
"""KEYS: the buckets of the requests asked about together (a key may come more than once);
ARGV: microseconds per request, burst. Returns allowed (1/0) and microseconds to wait, per
key, in order.

A key holds the theoretical arrival time (TAT) of its caller's next request in microseconds
of Redis's clock: a request is allowed when TAT lies less than ``burst`` intervals ahead of
now, and then moves TAT one interval on. ``burst`` requests at once, then one per interval:
exactly the token bucket it replaces."""


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after_s: int
    """Whole seconds until a request would be allowed (for ``Retry-After``), at least 1."""


def _retry_after(wait_s: float) -> int:
    return max(1, math.ceil(wait_s))


class LocalBuckets:
    """Token buckets in this process's memory: the limit while Redis is away.

    Buckets that have refilled are pruned (a new one starts full: nothing is forgotten), and
    at most ``max_buckets`` are kept, so memory stays bounded whoever sends requests.
    """

    def __init__(self, *, per_s: float, burst: int, max_buckets: int = 100_000) -> None:
        self.per_s = per_s
        self.burst = float(max(1, burst))
        self.max_buckets = max_buckets
        self.buckets: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()
        self._next_prune = 0.0

    def allow(self, who: str) -> Decision:
        now = time.monotonic()
        with self.lock:
            if now >= self._next_prune or len(self.buckets) >= self.max_buckets:
                self._prune(now)
            tokens, last = self.buckets.get(who, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.per_s)
            allowed = tokens >= 1.0
            self.buckets[who] = (tokens - 1.0 if allowed else tokens, now)
        return Decision(allowed, 0 if allowed else _retry_after((1.0 - tokens) / self.per_s))

    def _prune(self, now: float) -> None:
        """Drop full buckets; when still too many, keep the newest half."""
        refill_s = self.burst / self.per_s
        self.buckets = {w: b for w, b in self.buckets.items() if now - b[1] < refill_s}
        if len(self.buckets) >= self.max_buckets:
            newest = sorted(self.buckets.items(), key=lambda item: item[1][1])
            self.buckets = dict(newest[len(newest) - self.max_buckets // 2 :])
        self._next_prune = now + min(refill_s, 10.0)


def limiter_client(url: str, *, cluster: bool) -> AsyncRedisClient:
    """The client of the shared limits: a request never waits longer than ``TIMEOUT_S`` on
    them."""
    return fail_fast_async(url, cluster=cluster, timeout_s=TIMEOUT_S)


class SharedRateLimit:
    """``per_s`` requests per second and ``burst`` at once per caller, across processes.

    The requests an event loop turn asks about go to Redis together, in one script call
    (under load, many arrive at once): one round trip and one system call pair for them all
    instead of one per request.
    """

    def __init__(self, client: AsyncRedisClient, keys: Keys, *, per_s: float, burst: int) -> None:
        self.client = client
        self.keys = keys
        self.per_s = per_s
        self.burst = max(1, burst)
        self.interval_us = 1_000_000 / per_s
        self.rule = f"{per_s:g}/{self.burst}"
        """Part of each bucket's key: API processes share buckets when their limits agree
        (during a rolling change of the limit, old and new processes keep their own)."""
        self.script: Any = client.register_script(GCRA)
        self.local = LocalBuckets(per_s=per_s, burst=burst)
        self.local_until = 0.0
        """Until when (monotonic) the limit is kept in memory after Redis failed."""
        self.refused_until: dict[str, float] = {}
        """Callers refused by Redis, and until when (monotonic) their buckets stay empty."""
        self.asking: list[tuple[str, asyncio.Future[tuple[int, int]]]] = []
        """Callers of this loop turn, to ask Redis about together."""
        self.calls: set[asyncio.Task[None]] = set()
        self.outage = OutageLog("shared rate limit (kept per process meanwhile)", log)

    async def allow(self, who: str) -> Decision:
        """May ``who`` (``p:<principal>`` or ``a:<address>``) make a request now?"""
        now = time.monotonic()
        until = self.refused_until.get(who)
        if until is not None:
            if now < until:  # what Redis would answer: a refusal changes no bucket
                return Decision(False, _retry_after(until - now))
            del self.refused_until[who]
        if now < self.local_until:
            return self.local.allow(who)
        try:
            allowed, wait_us = await self._ask(who)
        except (redis.RedisError, OSError) as error:
            self.outage.failed(error)
            self.local_until = time.monotonic() + FALLBACK_S
            return self.local.allow(who)
        self.outage.recovered()
        if allowed:
            return Decision(True, 0)
        wait_s = wait_us / 1e6
        self._refuse_until(who, time.monotonic() + wait_s)
        return Decision(False, _retry_after(wait_s))

    def _ask(self, who: str) -> asyncio.Future[tuple[int, int]]:
        """Redis's answer for ``who``, asked with the other callers of this loop turn."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[tuple[int, int]] = loop.create_future()
        self.asking.append((who, answer))
        if len(self.asking) == 1:  # the first of this turn: ask once the turn's others came
            loop.call_soon(self._send)
        return answer

    def _send(self) -> None:
        asking, self.asking = self.asking, []
        call = asyncio.get_running_loop().create_task(self._call(asking))
        self.calls.add(call)
        call.add_done_callback(self.calls.discard)

    async def _call(self, asking: list[tuple[str, asyncio.Future[tuple[int, int]]]]) -> None:
        try:
            flat = await self.script(
                keys=[self.keys.rate_limit(self.rule, who) for who, _ in asking],
                args=[self.interval_us, self.burst],
            )
        except Exception as error:  # each caller decides what an outage means for it
            for _, answer in asking:
                if not answer.done():
                    answer.set_exception(error)
            return
        except BaseException:  # cancelled: the app is stopping
            for _, answer in asking:
                answer.cancel()
            raise
        for index, (_, answer) in enumerate(asking):
            if not answer.done():  # a caller that went away meanwhile is not answered
                answer.set_result((int(flat[2 * index]), int(flat[2 * index + 1])))

    def _refuse_until(self, who: str, until: float) -> None:
        """Refuse ``who`` here until ``until`` without asking Redis: no request of anyone's,
        on any process, can make its bucket allow one sooner. A caller flooding the API is
        so refused at no Redis round trip. Bounded like the local buckets."""
        if len(self.refused_until) >= MAX_REFUSED:
            now = time.monotonic()
            self.refused_until = {w: t for w, t in self.refused_until.items() if t > now}
            if len(self.refused_until) >= MAX_REFUSED:
                self.refused_until.clear()  # forgetting a refusal only costs a round trip
        self.refused_until[who] = until

    async def aclose(self) -> None:
        await self.client.aclose()
