"""Several API processes, one service: two real ``jetspark api`` processes on different ports,
one PostgreSQL and one Redis.

A change made through one process reaches the other's job-view cache, long-poll and event
streams (PostgreSQL NOTIFY); each webhook delivery is POSTed once although both processes
deliver; the rate limit and the event-stream quota are one budget whichever process answers.
"""

from __future__ import annotations

import copy
import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from jetspark.db.engine import make_engine
from jetspark.db.tables import WebhookDelivery
from jetspark.jobs.orchestration import CHANNEL
from jetspark.tenants.quotas import LEASE_S
from tests.api.test_events import read_events, take
from tests.databases import fresh_database
from tests.live_server import ApiProcess, api_process, serving_processes
from tests.polling import poll
from tests.webhooks.receiver import receiver

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "word-count.json"
TOKENS = {"alice": "alice-token", "streams": "streams-token", "limited": "limited-token"}
SECRET = "multi-api-webhook-secret"
SSE_QUOTA = 2


def job_body(*notify: str) -> dict[str, Any]:
    body: dict[str, Any] = copy.deepcopy(json.loads(EXAMPLE.read_text()))
    if notify:
        body.setdefault("config", {})["notify"] = list(notify)
    return body


def client(api: ApiProcess, principal: str | None = "alice") -> httpx.Client:
    headers = {"Authorization": f"Bearer {TOKENS[principal]}"} if principal else {}
    return httpx.Client(base_url=api.url, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def database(server_database_url: str) -> Iterator[str]:
    """Both processes deliver every due webhook of their database: a database of their own."""
    with fresh_database(server_database_url, "jetspark_apis") as url:
        yield url


def api_env(database: str, redis_url: str, **settings: str) -> dict[str, str]:
    """What API processes of one service share, and ``settings``."""
    return {
        "JETSPARK_DATABASE_URL": database,
        "JETSPARK_REDIS_URL": redis_url,
        "JETSPARK_REDIS_NAMESPACE": f"apis-{uuid.uuid4().hex[:8]}",
        "JETSPARK_API_PRINCIPALS": ",".join(f"{n}:{t}" for n, t in TOKENS.items()),
    } | settings


@contextmanager
def two_apis(
    database: str, redis_url: str, log_dir: Path, **settings: str
) -> Iterator[tuple[ApiProcess, ApiProcess]]:
    env = api_env(database, redis_url, **settings)
    with ExitStack() as stack:
        first = stack.enter_context(api_process(env, log_dir))
        second = stack.enter_context(api_process(env, log_dir))
        yield first, second


@pytest.fixture(scope="module")
def apis(
    database: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ApiProcess, ApiProcess]]:
    """Two API processes, rate limit off, each with a webhook deliverer; views may be cached
    for a minute, so only a NOTIFY can make a process drop one."""
    with two_apis(
        database,
        redis_url,
        tmp_path_factory.mktemp("apis"),
        JETSPARK_API_RATE_LIMIT_PER_S="0",
        JETSPARK_QUOTA_SSE_CONNECTIONS=str(SSE_QUOTA),
        JETSPARK_API_VIEW_CACHE_MAX_AGE_S="60",
        JETSPARK_WEBHOOK_SECRET=SECRET,
        JETSPARK_WEBHOOK_ALLOWED_HOSTS="127.0.0.1/32",
        JETSPARK_WEBHOOK_POLL_S="0.5",
    ) as pair:
        yield pair


def test_a_change_through_one_process_reaches_the_other(
    apis: tuple[ApiProcess, ApiProcess],
) -> None:
    first, second = apis
    with client(first) as a, client(second) as b:
        created = a.post("/v1/jobs", json=job_body())
        assert created.status_code == 201, created.text
        job_id, etag = created.json()["id"], created.headers["etag"]
        for _ in range(2):  # the second process caches the view now
            assert b.get(f"/v1/jobs/{job_id}").json()["status"] == "QUEUED"
        with (
            b.stream("GET", f"/v1/jobs/{job_id}/events") as job_stream,
            b.stream("GET", "/v1/events") as all_stream,
        ):
            job_events = read_events(job_stream)
            (queued,) = take(job_events, 1)
            assert queued.data["to_status"] == "QUEUED"
            answers: list[httpx.Response] = []

            answered: list[float] = []
            wait_s = 30  # answered at this timeout, the long-poll would show the change too

            def long_poll() -> None:
                with client(second) as polling:
                    url = f"/v1/jobs/{job_id}?wait_s={wait_s}"
                    answers.append(polling.get(url, headers={"If-None-Match": etag}))
                    answered.append(time.monotonic())

            waited = threading.Thread(target=long_poll)
            waited.start()
            began = time.monotonic()  # before the change, and before the poll's timeout runs
            cancelled = a.post(f"/v1/jobs/{job_id}/cancel")
            assert cancelled.json()["status"] == "CANCELLED"
            new_etag = f'"{cancelled.json()["version"]}"'

            # A client that saw the new version is never answered with an older one, even
            # before the NOTIFY reached the second process.
            fresh = b.get(f"/v1/jobs/{job_id}", headers={"If-None-Match": new_etag})
            assert fresh.status_code == 304 and fresh.headers["etag"] == new_etag

            waited.join(timeout=40)
            (woken,) = answers
            assert woken.status_code == 200 and woken.json()["status"] == "CANCELLED"
            took = answered[0] - began
            assert took < wait_s / 2, f"the long-poll was not woken by the change ({took:.1f} s)"
            # The long-poll woke on the NOTIFY, which dropped the cached view first.
            plain = b.get(f"/v1/jobs/{job_id}")
            assert plain.json()["status"] == "CANCELLED" and plain.headers["etag"] == new_etag

            stopped, end = take(job_events, 2)
            assert stopped.data["to_status"] == "CANCELLED" and end.kind == "end"
            seen = take(read_events(all_stream), 1)[0]
            assert seen.data["job_id"] == job_id and seen.data["to_status"] == "CANCELLED"


def test_each_webhook_delivery_is_posted_once_by_two_processes(
    apis: tuple[ApiProcess, ApiProcess], database: str
) -> None:
    jobs = 8
    with receiver() as hook, client(apis[0]) as a, client(apis[1]) as b:
        ids = []
        for n in range(jobs):  # submitted through both, cancelled through the other
            made = (a, b)[n % 2].post("/v1/jobs", json=job_body(hook.url))
            assert made.status_code == 201, made.text
            ids.append(made.json()["id"])
        for n, job_id in enumerate(ids):
            assert (b, a)[n % 2].post(f"/v1/jobs/{job_id}/cancel").status_code == 200
        hook.wait_for(2 * jobs)  # QUEUED and CANCELLED of each

        engine = make_engine(database, pool_size=1)
        try:

            def settled() -> list[WebhookDelivery]:
                with Session(engine) as session:
                    rows = session.execute(
                        select(WebhookDelivery).where(
                            WebhookDelivery.job_id.in_([uuid.UUID(i) for i in ids])
                        )
                    ).scalars()
                    return [r for r in rows if r.state != "pending"]

            # Once every row is settled no process will POST it again: count then.
            poll(lambda: len(settled()) == 2 * jobs, what="every delivery settled")
            rows = settled()
        finally:
            engine.dispose()
    posts = Counter(r.delivery for r in hook.received)
    assert {r.state for r in rows} == {"delivered"}
    assert {r.attempts for r in rows} == {1}
    assert set(posts) == {str(r.id) for r in rows}
    assert set(posts.values()) == {1}, f"POSTed more than once: {posts}"


def test_the_event_stream_quota_is_one_budget_across_processes(
    apis: tuple[ApiProcess, ApiProcess],
) -> None:
    first, second = apis
    # Before on_a's slot is taken: its member scores at least its acquisition plus LEASE_S
    # (renewals only push it on), so no lease lapse frees it before opened + LEASE_S.
    opened = time.monotonic()
    with client(first, "streams") as a, client(second, "streams") as b, ExitStack() as held:
        on_a = held.enter_context(a.stream("GET", "/v1/events"))
        on_b = held.enter_context(b.stream("GET", "/v1/events"))
        assert on_a.status_code == on_b.status_code == 200
        for api in (a, b):
            with api.stream("GET", "/v1/events") as refused:
                assert refused.status_code == 429
                body = json.loads(refused.read())
                assert "JETSPARK_QUOTA_SSE_CONNECTIONS" in body["detail"]
        on_a.close()  # a slot freed on one process is free on the other

        def opens_on_b() -> bool:
            with b.stream("GET", "/v1/events") as again:
                return again.status_code == 200

        # Seen before on_a's lease could lapse: freed by its release, not by its lease.
        poll(
            opens_on_b,
            what="the released slot taken through the other process (before its lease lapsed)",
            deadline_s=opened + LEASE_S - time.monotonic(),
        )


def test_the_rate_limit_is_one_budget_across_processes(
    database: str, redis_url: str, tmp_path: Path
) -> None:
    burst = 5
    with (
        two_apis(
            database,
            redis_url,
            tmp_path,
            # A slow refill: no request of the test earns a token back.
            JETSPARK_API_RATE_LIMIT_PER_S="0.01",
            JETSPARK_API_RATE_LIMIT_BURST=str(burst),
        ) as (first, second),
        client(first, "limited") as a,
        client(second, "limited") as b,
        client(first, None) as anonymous_a,
        client(second, None) as anonymous_b,
    ):
        statuses = [(a, b)[n % 2].get("/v1/jobs").status_code for n in range(2 * burst)]
        assert statuses == [200] * burst + [429] * burst
        refused = b.get("/v1/jobs")
        assert refused.headers["content-type"] == "application/problem+json"
        assert int(refused.headers["retry-after"]) >= 1
        # Another principal has a budget of its own.
        with client(first, "alice") as other:
            assert other.get("/v1/jobs").status_code == 200
        # Without a token: one budget per client address, also across processes (the
        # readiness polls that started the processes took some of it already)...
        answers = [(anonymous_a, anonymous_b)[n % 2].get("/v1/jobs") for n in range(2 * burst)]
        unauthorized = [r.status_code for r in answers].count(401)
        assert unauthorized <= burst
        assert [r.status_code for r in answers] == [401] * unauthorized + [429] * (
            2 * burst - unauthorized
        )
        # ... but a load balancer's health checks are never limited.
        for n in range(4 * burst):
            assert (anonymous_a, anonymous_b)[n % 2].get("/healthz").status_code == 200


def test_jetspark_api_workers_serves_one_port_from_that_many_processes(
    database: str, redis_url: str, tmp_path: Path
) -> None:
    env = api_env(database, redis_url, JETSPARK_API_RATE_LIMIT_PER_S="0")
    engine = make_engine(database, pool_size=1)

    def listening() -> int:
        with Session(engine) as session:
            found = session.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND query = :listen"
                ),
                {"listen": f"LISTEN {CHANNEL}"},
            ).scalar_one()
            return int(found)

    try:
        before = listening()
        with api_process(env, tmp_path, workers=3) as api:
            serving = serving_processes(api.process.pid)
            assert len(serving) == 3
            # Each process started the app: its own LISTEN connection on the job channel.
            poll(lambda: listening() == before + 3, what="three LISTEN connections")
            with client(api) as http:
                assert http.get("/v1/jobs").status_code == 200
            # One dies (SIGKILL): the others go on serving, and uvicorn starts another.
            serving[0].kill()
            with client(api) as http:
                assert http.get("/v1/jobs").status_code == 200
            poll(
                lambda: len(serving_processes(api.process.pid)) == 3,
                what="a new process in place of the dead one",
                deadline_s=60,
            )
            assert serving[0].pid not in {p.pid for p in serving_processes(api.process.pid)}
            poll(lambda: listening() == before + 3, what="its LISTEN connection", deadline_s=60)
            serving = serving_processes(api.process.pid)
        assert not [p for p in serving if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    finally:
        engine.dispose()
