"""Jobs over HTTP: submit, idempotency, ETag, long-poll, transitions, pagination, results."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import httpx
import redis
from fastapi import FastAPI

from jetspark.queue.keys import Keys


def submit(http: httpx.Client, body: dict[str, Any], **headers: str) -> httpx.Response:
    return http.post("/v1/jobs", json=body, headers=headers)


def test_submit_queues_the_job_and_announces_it(
    http: httpx.Client, word_count: dict[str, Any], redis_client: redis.Redis, redis_namespace: str
) -> None:
    response = submit(http, word_count)
    assert response.status_code == 201, response.text
    job = response.json()
    assert response.headers["location"] == f"/v1/jobs/{job['id']}"
    assert job["status"] == "QUEUED" and job["attempt"] == 0
    assert job["plan"]["stages"][0]["vertices"] == ["lines", "tokenize"]
    entries: list[Any] = redis_client.xrange(Keys(redis_namespace).jobs_stream)  # type: ignore[assignment]
    assert job["id"] in {fields["job_id"] for _, fields in entries}


def test_idempotency_key_returns_the_same_job_and_refuses_another_body(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    key = f"key-{uuid.uuid4()}"
    first = submit(http, word_count, **{"Idempotency-Key": key})
    again = submit(http, word_count, **{"Idempotency-Key": key})
    assert first.status_code == 201 and again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert again.headers["location"] == first.headers["location"]
    word_count["name"] = "another"
    other = submit(http, word_count, **{"Idempotency-Key": key})
    assert other.status_code == 422
    assert other.headers["content-type"] == "application/problem+json"
    assert key in other.json()["detail"]


def test_etag_and_if_none_match(http: httpx.Client, word_count: dict[str, Any]) -> None:
    job_id = submit(http, word_count).json()["id"]
    first = http.get(f"/v1/jobs/{job_id}")
    etag = first.headers["etag"]
    assert etag == f'"{first.json()["version"]}"'
    assert http.get(f"/v1/jobs/{job_id}", headers={"If-None-Match": etag}).status_code == 304
    http.post(f"/v1/jobs/{job_id}/cancel").raise_for_status()
    changed = http.get(f"/v1/jobs/{job_id}", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag


def test_long_poll_returns_as_soon_as_the_job_changes(
    http: httpx.Client, api_app: FastAPI, word_count: dict[str, Any]
) -> None:
    created = submit(http, word_count)
    job_id, etag = created.json()["id"], created.headers["etag"]
    answer: dict[str, Any] = {}

    wait_s = 20  # answered at this timeout, the long-poll would show the change too

    def long_poll() -> None:
        reply = http.get(f"/v1/jobs/{job_id}?wait_s={wait_s}", headers={"If-None-Match": etag})
        answer.update(status=reply.status_code, body=reply.json(), at=time.monotonic())

    poller = threading.Thread(target=long_poll)
    poller.start()
    deadline = time.monotonic() + 10
    while uuid.UUID(job_id) not in api_app.state.listener.waiters:  # the poll is waiting
        assert time.monotonic() < deadline, "the long-poll never started waiting"
        time.sleep(0.01)
    changed = time.monotonic()
    http.post(f"/v1/jobs/{job_id}/cancel").raise_for_status()
    poller.join(timeout=30)
    assert answer["status"] == 200 and answer["body"]["status"] == "CANCELLED"
    # From the change: well before the timeout, which runs from before it.
    took = answer["at"] - changed
    assert took < wait_s / 2, f"long-poll took {took:.2f}s to see the change"


def test_long_poll_times_out_with_not_modified(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    created = submit(http, word_count)
    reply = http.get(
        f"/v1/jobs/{created.json()['id']}?wait_s=0.3",
        headers={"If-None-Match": created.headers["etag"]},
    )
    assert reply.status_code == 304


def test_transitions_and_illegal_ones(http: httpx.Client, word_count: dict[str, Any]) -> None:
    job_id = submit(http, word_count).json()["id"]
    assert http.post(f"/v1/jobs/{job_id}/suspend").json()["status"] == "SUSPENDED"
    assert http.post(f"/v1/jobs/{job_id}/resume").json()["status"] == "QUEUED"
    refused = http.post(f"/v1/jobs/{job_id}/restart")
    assert refused.status_code == 409
    assert refused.json()["title"] == "Illegal transition" and "QUEUED" in refused.json()["detail"]
    cancelled = http.post(f"/v1/jobs/{job_id}/cancel")
    assert cancelled.json()["status"] == "CANCELLED"
    again = http.post(f"/v1/jobs/{job_id}/cancel")  # a retry: the job as it is, not a 409
    assert again.status_code == 200 and again.json() == cancelled.json()
    illegal = http.post(f"/v1/jobs/{job_id}/resume")
    assert illegal.status_code == 409 and "CANCELLED" in illegal.json()["detail"]


def test_lifecycle_posts_honour_idempotency_keys(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    job_id = submit(http, word_count).json()["id"]
    key = {"Idempotency-Key": f"suspend-{uuid.uuid4()}"}
    first = http.post(f"/v1/jobs/{job_id}/suspend", headers=key)
    assert first.status_code == 200 and first.json()["status"] == "SUSPENDED"
    resumed = http.post(f"/v1/jobs/{job_id}/resume").json()
    # The suspend's answer was lost; its retry does not suspend the resumed job again.
    replay = http.post(f"/v1/jobs/{job_id}/suspend", headers=key)
    assert replay.status_code == 200 and replay.json()["status"] == "QUEUED"
    assert replay.json()["version"] == resumed["version"]
    # The same key for another action is a client's mistake, said so.
    reused = http.post(f"/v1/jobs/{job_id}/cancel", headers=key)
    assert reused.status_code == 422 and reused.json()["title"] == "Key reused"
    assert http.get(f"/v1/jobs/{job_id}").json()["status"] == "QUEUED"


def test_unknown_and_malformed_job_ids(http: httpx.Client) -> None:
    missing = http.get(f"/v1/jobs/{uuid.uuid4()}")
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    assert http.post(f"/v1/jobs/{uuid.uuid4()}/cancel").status_code == 404
    assert http.get("/v1/jobs/not-a-uuid").status_code == 422


def test_list_filters_and_pages(http: httpx.Client, word_count: dict[str, Any]) -> None:
    name = f"paged-{uuid.uuid4().hex[:8]}"
    word_count["name"] = name
    ids = [submit(http, word_count).json()["id"] for _ in range(5)]
    seen: list[str] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"name": name, "limit": 2, "status": "QUEUED"}
        if cursor:
            params["cursor"] = cursor
        page = http.get("/v1/jobs", params=params).json()
        seen += [job["id"] for job in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == list(reversed(ids))
    http.post(f"/v1/jobs/{ids[0]}/cancel").raise_for_status()
    cancelled = http.get("/v1/jobs", params={"name": name, "status": "CANCELLED"}).json()
    assert [job["id"] for job in cancelled["items"]] == [ids[0]]
    assert http.get("/v1/jobs", params={"cursor": "garbage"}).status_code == 422


def test_results_of_a_job_without_results_are_empty(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    job_id = submit(http, word_count).json()["id"]
    assert http.get(f"/v1/jobs/{job_id}/results").json() == {"items": [], "next_cursor": None}
