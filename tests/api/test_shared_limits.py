"""The rate limit and the event-stream quota shared through Redis: what a process that died
leaves behind, and what the API does while Redis is away (each process counts alone)."""

from __future__ import annotations

import asyncio
import time
import uuid

import httpx

from api.app import create_app
from jetspark.queue.keys import Keys
from jetspark.redis_client import connect_async
from jetspark.settings import ApiSettings, TenantSettings
from jetspark.tenants.quotas import SharedConnectionSlots
from jetspark.tenants.rate_limit import SharedRateLimit
from tests.live_server import live_server

NOWHERE = "redis://127.0.0.1:1/0"
"""A Redis that refuses every connection."""


def slots(redis_url: str, keys: Keys, limit: int, lease_s: float) -> SharedConnectionSlots:
    return SharedConnectionSlots(
        connect_async(redis_url, cluster=False, decode_responses=True), keys, limit, lease_s=lease_s
    )


def test_the_streams_of_a_process_that_died_stop_counting_after_their_lease(
    redis_url: str,
) -> None:
    keys = Keys(f"slots-{uuid.uuid4().hex[:8]}")

    async def scenario() -> None:
        dead, alive = slots(redis_url, keys, 2, 1.0), slots(redis_url, keys, 2, 1.0)
        assert await dead.acquire("p") is not None
        assert await dead.acquire("p") is not None
        # `dead` never renews nor releases: its process is gone.
        assert await alive.acquire("p") is None
        deadline = time.monotonic() + 10
        while (slot := await alive.acquire("p")) is None:
            assert time.monotonic() < deadline, "a dead process's streams kept counting"
            await asyncio.sleep(0.1)  # waiting out the lease on Redis's clock
        assert slot.member is not None
        await dead.client.aclose()
        await alive.client.aclose()

    asyncio.run(scenario())


def test_a_live_process_keeps_its_streams_counted_past_the_lease(redis_url: str) -> None:
    keys = Keys(f"slots-{uuid.uuid4().hex[:8]}")

    async def scenario() -> None:
        # A lease of 3 s renewed every 1 s: a stall of the loop under 2 s lets no lease lapse.
        holder, other = slots(redis_url, keys, 1, 3.0), slots(redis_url, keys, 1, 3.0)
        holder.start()  # renews every 1 s
        held = await holder.acquire("p")
        assert held is not None
        await asyncio.sleep(7.0)  # over two leases long: only repeated renewals keep it
        assert await other.acquire("p") is None
        holder.release(held)
        deadline = time.monotonic() + 5
        while await other.acquire("p") is None:
            assert time.monotonic() < deadline, "a released stream kept counting"
            await asyncio.sleep(0.05)  # the release is sent by a task of the holder
        await holder.stop()
        await holder.client.aclose()
        await other.client.aclose()

    asyncio.run(scenario())


def test_the_shared_limit_is_the_token_bucket_it_replaced(redis_url: str) -> None:
    """``burst`` at once, then one per interval, on Redis's clock.

    The interval is 2 s: the calls meant to fall within one interval have 2 s (the first
    four) and 1.5 s (after the sleep) for their round trips, room for a loaded machine."""
    keys = Keys(f"rate-{uuid.uuid4().hex[:8]}")

    async def scenario() -> None:
        client = connect_async(redis_url, cluster=False, decode_responses=True)
        limit = SharedRateLimit(client, keys, per_s=0.5, burst=3)
        first = [(await limit.allow("p:x")).allowed for _ in range(4)]
        assert first == [True, True, True, False]
        refused = await limit.allow("p:x")
        # The next token is at most one interval (2 s) away, in whole seconds: 2, or 1 when
        # the calls above took a second or more.
        assert not refused.allowed and refused.retry_after_s in (1, 2)
        await asyncio.sleep(2.5)  # one interval (2 s) and a margin: one more request
        assert [(await limit.allow("p:x")).allowed for _ in range(2)] == [True, False]
        assert (await limit.allow("p:y")).allowed  # another caller, another bucket

        # A refused caller is refused here until its bucket refills, without asking Redis.
        async def unreachable(**_: object) -> None:
            raise AssertionError("Redis asked while the answer was known")

        asked, limit.script = limit.script, unreachable
        assert not (await limit.allow("p:x")).allowed
        limit.script = asked
        await asyncio.sleep(2.5)
        assert (await limit.allow("p:x")).allowed
        await client.aclose()

    asyncio.run(scenario())


def test_without_redis_each_process_limits_and_counts_on_its_own(database_url: str) -> None:
    token = f"no-redis-{uuid.uuid4().hex}"
    app = create_app(
        database_url=database_url,
        redis_url=NOWHERE,
        api_settings=ApiSettings(tokens=[token], rate_limit_per_s=0.01, rate_limit_burst=3),
        tenant_settings=TenantSettings(quota_sse_connections=1),
    )
    with (
        live_server(app) as url,
        httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as http,
    ):
        began = time.monotonic()
        statuses = [http.get("/v1/jobs").status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]  # PostgreSQL answers; the limit holds
        assert time.monotonic() - began < 5, "requests waited on the Redis that is away"
    app = create_app(
        database_url=database_url,
        redis_url=NOWHERE,
        api_settings=ApiSettings(tokens=[token], rate_limit_per_s=0),
        tenant_settings=TenantSettings(quota_sse_connections=1),
    )
    with (
        live_server(app) as url,
        httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as http,
        http.stream("GET", "/v1/events") as first,
    ):
        assert first.status_code == 200  # status events come from PostgreSQL alone
        with http.stream("GET", "/v1/events") as second:
            assert second.status_code == 429


def test_requests_asked_about_together_share_one_script_call(redis_url: str) -> None:
    """Concurrent requests (many callers, one caller many times) go to Redis in one call and
    get exactly what one at a time would."""
    keys = Keys(f"rate-{uuid.uuid4().hex[:8]}")

    async def scenario() -> None:
        client = connect_async(redis_url, cluster=False, decode_responses=True)
        limit = SharedRateLimit(client, keys, per_s=0.01, burst=3)
        calls = 0
        script = limit.script

        async def counted(**arguments: object) -> object:
            nonlocal calls
            calls += 1
            return await script(**arguments)

        limit.script = counted
        callers = ["p:a"] * 5 + ["p:b"] * 2 + ["a:10.0.0.1"] * 4
        decisions = await asyncio.gather(*(limit.allow(who) for who in callers))
        assert calls == 1
        allowed: dict[str, int] = {}
        for who, decision in zip(callers, decisions, strict=True):
            allowed[who] = allowed.get(who, 0) + decision.allowed
        assert allowed == {"p:a": 3, "p:b": 2, "a:10.0.0.1": 3}
        await client.aclose()

    asyncio.run(scenario())
