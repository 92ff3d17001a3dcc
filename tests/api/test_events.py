"""Server-Sent Events of a job: status history, live ticks, resume without gaps, the end."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import redis

from jetspark.queue.events import EventKind, publish
from jetspark.queue.keys import Keys


@dataclass(frozen=True)
class Event:
    id: str
    kind: str
    data: dict[str, Any]


def read_events(response: httpx.Response) -> Iterator[Event]:
    """Parse ``text/event-stream`` (comments and pings skipped)."""
    fields: dict[str, str] = {}
    for line in response.iter_lines():
        if line == "":
            if "data" in fields:
                yield Event(
                    fields.get("id", ""), fields.get("event", "message"), json.loads(fields["data"])
                )
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")


def take(events: Iterator[Event], count: int, *, deadline_s: float = 20) -> list[Event]:
    got: list[Event] = []
    deadline = time.monotonic() + deadline_s
    for event in events:
        got.append(event)
        if len(got) == count:
            return got
        assert time.monotonic() < deadline, f"only {len(got)} of {count} events: {got}"
    raise AssertionError(f"the stream ended after {len(got)} of {count} events: {got}")


def follow(http: httpx.Client, job_id: str, last_event_id: str | None = None) -> Any:
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    return http.stream("GET", f"/v1/jobs/{job_id}/events", headers=headers, timeout=30)


def test_status_changes_stream_live_and_end_with_the_job(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    job_id = http.post("/v1/jobs", json=word_count).json()["id"]
    with follow(http, job_id) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = read_events(response)
        (queued,) = take(events, 1)
        assert queued.kind == "status" and queued.data["to_status"] == "QUEUED"
        threading.Thread(target=lambda: http.post(f"/v1/jobs/{job_id}/cancel")).start()
        cancelled, end = take(events, 2)
    assert cancelled.data["from_status"] == "QUEUED"
    assert cancelled.data["to_status"] == "CANCELLED"
    assert end.kind == "end"


def test_a_client_that_reconnects_gets_exactly_what_it_missed(
    http: httpx.Client, word_count: dict[str, Any], redis_client: redis.Redis, redis_namespace: str
) -> None:
    job_id = http.post("/v1/jobs", json=word_count).json()["id"]
    keys = Keys(redis_namespace)
    with follow(http, job_id) as response:
        first = take(read_events(response), 1)[0]
    # While the client is away: a metric tick, two status changes, a snapshot.
    publish(redis_client, keys, uuid.UUID(job_id), EventKind.metrics, {"tick": 1})
    assert http.post(f"/v1/jobs/{job_id}/suspend").status_code == 200
    assert http.post(f"/v1/jobs/{job_id}/resume").status_code == 200
    publish(redis_client, keys, uuid.UUID(job_id), EventKind.snapshot, {"snapshot_id": 7})
    with follow(http, job_id, last_event_id=first.id) as response:
        events = read_events(response)
        missed = take(events, 4)
        kinds = sorted((e.kind, json.dumps(e.data, sort_keys=True)) for e in missed)
        publish(redis_client, keys, uuid.UUID(job_id), EventKind.metrics, {"tick": 2})
        live = take(events, 1)[0]
    statuses = [e.data["to_status"] for e in missed if e.kind == "status"]
    assert statuses == ["SUSPENDED", "QUEUED"]
    assert [k for k, _ in kinds].count("metrics") == 1
    assert [k for k, _ in kinds].count("snapshot") == 1
    assert live.kind == "metrics" and live.data == {"tick": 2}
    ids = [first.id, *(e.id for e in missed), live.id]
    assert len(set(ids)) == len(ids), "an event came twice"

    # Resuming from the last id repeats nothing that was already seen.
    http.post(f"/v1/jobs/{job_id}/cancel")
    with follow(http, job_id, last_event_id=live.id) as response:
        rest = list(read_events(response))
    assert [(e.kind, e.data.get("to_status")) for e in rest] == [
        ("status", "CANCELLED"),
        ("end", None),
    ]


def test_events_of_an_unknown_job_or_a_forged_id_are_problems(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    missing = http.get(f"/v1/jobs/{uuid.uuid4()}/events")
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    job_id = http.post("/v1/jobs", json=word_count).json()["id"]
    forged = http.get(f"/v1/jobs/{job_id}/events", headers={"Last-Event-ID": "x; DROP"})
    assert forged.status_code == 422
    assert forged.json()["type"].endswith("/invalid-event-id")


def test_the_all_jobs_stream_carries_every_jobs_status_changes_from_now_on(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    earlier = http.post("/v1/jobs", json=word_count).json()["id"]
    with http.stream("GET", "/v1/events", timeout=30) as response:
        assert response.status_code == 200
        events = read_events(response)
        first = http.post("/v1/jobs", json=word_count).json()["id"]
        second = http.post("/v1/jobs", json=word_count).json()["id"]
        http.post(f"/v1/jobs/{first}/cancel")
        seen = take(events, 3)
    assert [(e.data["job_id"], e.data["to_status"]) for e in seen] == [
        (first, "QUEUED"),
        (second, "QUEUED"),
        (first, "CANCELLED"),
    ]
    assert earlier not in {e.data["job_id"] for e in seen}
    # Resuming after the first event replays the other two, in order.
    with http.stream("GET", "/v1/events", headers={"Last-Event-ID": seen[0].id}) as response:
        again = take(read_events(response), 2)
    assert [e.id for e in again] == [e.id for e in seen[1:]]
