"""The status-read cache never serves a view older than what PostgreSQL announced.

A worker changes a job from another process; only PostgreSQL's NOTIFY tells the API. Once
the listener has heard it, the next read must show the change, though the old view was
cached a moment before.
"""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.orm import Session

from api.app import create_app
from jetspark.jobs import orchestration
from jetspark.settings import ApiSettings, TenantSettings
from tests.api.leftovers import no_leftovers
from tests.live_server import live_server

pytestmark = pytest.mark.usefixtures(no_leftovers.__name__)


def test_a_change_from_another_process_is_seen_once_announced(
    http: httpx.Client, api_app: FastAPI, db_session: Session, word_count: dict[str, Any]
) -> None:
    cache = api_app.state.listener.cache
    created = http.post("/v1/jobs", json=word_count).json()
    job_id = uuid.UUID(created["id"])
    first = http.get(f"/v1/jobs/{job_id}")
    assert first.json()["status"] == "QUEUED"
    assert cache.entries[job_id].version == first.json()["version"], "the read was not cached"

    # What a worker does, through its own connection: the API hears of it only by NOTIFY.
    claimed = orchestration.claim(
        db_session, job_id, worker="test-worker", lease=timedelta(seconds=30)
    )
    assert claimed is not None
    db_session.commit()

    deadline = time.monotonic() + 10
    while cache.announced.get(job_id, 0) < claimed.version:
        assert time.monotonic() < deadline, "the listener never heard the NOTIFY"
        time.sleep(0.01)
    after = http.get(f"/v1/jobs/{job_id}")
    assert after.json()["status"] == "STARTING" and after.json()["worker"] == "test-worker"
    assert after.headers["etag"] == f'"{claimed.version}"'
    # No job held by a worker that does not exist outlives the test.
    assert http.post(f"/v1/jobs/{job_id}/cancel").json()["status"] == "CANCELLED"


def test_this_process_own_write_is_read_back_at_once(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    job_id = http.post("/v1/jobs", json=word_count).json()["id"]
    for _ in range(3):  # cached now
        assert http.get(f"/v1/jobs/{job_id}").json()["status"] == "QUEUED"
    assert http.post(f"/v1/jobs/{job_id}/suspend").status_code == 200
    # No waiting for the NOTIFY round trip: the suspend dropped the cached view itself.
    assert http.get(f"/v1/jobs/{job_id}").json()["status"] == "SUSPENDED"


def test_concurrent_reads_of_an_uncached_job_agree(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    """Reads that miss together share one database read; each still gets a full answer."""
    created = http.post("/v1/jobs", json=word_count)
    job_id, etag = created.json()["id"], created.headers["etag"]
    missing = uuid.uuid4()
    with ThreadPoolExecutor(max_workers=16) as pool:
        found = list(pool.map(lambda _: http.get(f"/v1/jobs/{job_id}"), range(48)))
        absent = list(pool.map(lambda _: http.get(f"/v1/jobs/{missing}"), range(16)))
    assert {(r.status_code, r.headers["etag"]) for r in found} == {(200, etag)}
    assert {r.json()["id"] for r in found} == {job_id}
    assert {r.status_code for r in absent} == {404}
    assert all(r.json()["title"] == "Job not found" for r in absent)


def test_a_cached_view_is_answered_as_the_route_answers_it(
    database_url: str, redis_url: str, redis_namespace: str, word_count: dict[str, Any]
) -> None:
    """A plain read of a cached view skips FastAPI's parameter solving: the owner, an admin,
    another principal, a bad token and odd headers get what the full route gives them."""
    tokens = {name: f"{name}-{uuid.uuid4().hex}" for name in ("alice", "bob", "root")}
    app = create_app(
        database_url=database_url,
        redis_url=redis_url,
        redis_namespace=redis_namespace,
        api_settings=ApiSettings(tokens=[], rate_limit_per_s=0),
        tenant_settings=TenantSettings(
            api_principals=[f"{name}-{tokens[name][-6:]}:{t}" for name, t in tokens.items()],
            api_admins=[f"root-{tokens['root'][-6:]}"],
        ),
    )

    def get(token: str | None, **headers: str) -> httpx.Response:
        auth = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.get(f"{url}/v1/jobs/{job_id}", headers=auth | headers, timeout=30)

    with live_server(app) as url:
        alice = {"Authorization": f"Bearer {tokens['alice']}"}
        created = httpx.post(f"{url}/v1/jobs", json=word_count, headers=alice, timeout=30)
        job_id, etag = created.json()["id"], created.headers["etag"]
        owned = get(tokens["alice"])
        assert app.state.listener.cache.get(uuid.UUID(job_id)) is not None, "not cached"
        assert owned.status_code == 200 and owned.headers["etag"] == etag
        assert get(tokens["alice"]).content == owned.content
        assert get(tokens["root"]).content == owned.content  # an admin sees every job
        assert get(tokens["alice"], **{"If-None-Match": etag}).status_code == 304
        assert get(tokens["alice"], **{"If-None-Match": f'"0", {etag}'}).status_code == 304
        hidden = get(tokens["bob"])
        assert hidden.status_code == 404 and hidden.json()["title"] == "Job not found"
        assert get("not-a-token").status_code == 401
        assert get(None).status_code == 401
        assert get(tokens["alice"], **{"If-None-Match": "x" * 300}).status_code == 422
        long_poll = httpx.get(
            f"{url}/v1/jobs/{job_id}?wait_s=0", headers=alice, timeout=30
        )  # a query: the full route
        assert long_poll.content == owned.content
        cancel = httpx.post(f"{url}/v1/jobs/{job_id}/cancel", headers=alice, timeout=30)
        assert cancel.status_code == 200
