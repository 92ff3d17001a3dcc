"""A stream's snapshot history (``GET /v1/jobs/{id}/snapshots``): what a real run records,
paged; the last N kept; failed and abandoned snapshots with their reason; gone with the job."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from jetspark.db.tables import Job, SnapshotHistory
from jetspark.jobs import snapshot_history
from jetspark.jobs.orchestration import StaleFencingToken
from jetspark.jobs.status import JobStatus
from tests.api.conftest import TOKEN
from tests.polling import poll
from worker.engine.streaming.state_store import ReplicasMissing
from worker.loop import Worker

pytestmark = pytest.mark.spark


def counted_stream(name: str) -> dict[str, Any]:
    """1,000 events a second, counted per key in a window's state, a snapshot every 200 ms."""
    return {
        "name": name,
        "dag": {
            "vertices": [
                {"name": "numbers", "processor": "source.sequence",
                 "params": {"count": 10**12, "rate_per_s": 1000}},
                {"name": "events", "processor": "map",
                 "params": {"select": {"seq": "seq", "ts": "seq * 7", "k": "seq % 50"}}},
                {"name": "stamped", "processor": "insert_watermarks",
                 "params": {"timestamp": "ts", "allowed_lag_ms": 100}},
                {"name": "windows", "processor": "window",
                 "params": {"timestamp": "ts", "type": "tumbling", "size_ms": 60_000, "key": "k",
                            "aggregations": {"n": "count(*)"}}},
                {"name": "results", "processor": "sink.results", "local_parallelism": 1},
            ],
            "edges": [
                {"from": "numbers", "to": "events"},
                {"from": "events", "to": "stamped"},
                {"from": "stamped", "to": "windows", "routing": "partitioned", "key": "k"},
                {"from": "windows", "to": "results"},
            ],
        },
        "config": {
            "members": 1,
            "local_parallelism": 1,
            "processing_guarantee": "exactly_once",
            "snapshot_interval_ms": 200,
            "epoch_interval_ms": 100,
        },
    }  # fmt: skip


def finished(http: httpx.Client, job_id: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def done() -> bool:
        seen.update(http.get(f"/v1/jobs/{job_id}", params={"wait_s": 2}).json())
        return JobStatus(seen["status"]).is_terminal

    poll(done, deadline_s=180, what="the stream finished")
    return seen


def test_a_streams_snapshots_are_in_its_history_paged_newest_first(
    http: httpx.Client, worker: Worker
) -> None:
    del worker
    job_id = http.post("/v1/jobs", json=counted_stream("history")).json()["id"]

    def committed() -> list[dict[str, Any]]:
        body = http.get(f"/v1/jobs/{job_id}/snapshots").json()
        return [h for h in body["history"] if h["state"] == "committed"]

    poll(lambda: len(committed()) >= 3, what="3 snapshots committed", deadline_s=240,
         every_s=0.5)  # fmt: skip
    assert http.post(f"/v1/jobs/{job_id}/cancel").status_code == 200
    assert finished(http, job_id)["status"] == "CANCELLED"

    body = http.get(f"/v1/jobs/{job_id}/snapshots").json()
    history = body["history"]
    assert body["next_cursor"] is None
    assert [h["snapshot_id"] for h in history] == sorted(
        (h["snapshot_id"] for h in history), reverse=True
    )
    # Once the job is over nothing is in progress: a snapshot the cancel cut short is
    # abandoned, with its reason.
    assert {h["state"] for h in history} <= {"committed", "abandoned"}
    assert all(h["reason"] for h in history if h["state"] == "abandoned")
    history = [h for h in history if h["state"] == "committed"]
    assert len(history) >= 3
    for record in history:
        assert record["reason"] is None and record["attempt"] == 1
        started, ended = (datetime.fromisoformat(record[k]) for k in ("started_at", "ended_at"))
        written = datetime.fromisoformat(record["written_at"])
        assert started <= written <= ended
        assert record["duration_ms"] == pytest.approx(
            (ended - started).total_seconds() * 1000, abs=0.1
        )
        assert 0 <= record["write_ms"] <= record["duration_ms"]
        assert set(record["vertices"]) == {"windows"}
        assert record["backup_count"] == 0 and record["replicas"] is None
        # The window's 60 s holds every key's count: 50 keys once 50 events went by.
        assert record["rows"] == record["vertices"]["windows"]["rows"] <= 50
        assert record["bytes"] == record["vertices"]["windows"]["bytes"] > 0
    # The committed snapshot a restart would use is the history's newest committed one.
    assert body["items"][0]["snapshot_id"] == history[0]["snapshot_id"]
    history = body["history"]

    first = http.get(f"/v1/jobs/{job_id}/snapshots", params={"limit": 1}).json()
    assert [h["snapshot_id"] for h in first["history"]] == [history[0]["snapshot_id"]]
    cursor = first["next_cursor"]
    assert cursor is not None
    second = http.get(f"/v1/jobs/{job_id}/snapshots", params={"limit": 1, "cursor": cursor})
    assert [h["snapshot_id"] for h in second.json()["history"]] == [history[1]["snapshot_id"]]


@pytest.mark.parametrize(
    "params", [{"limit": 0}, {"limit": 1001}, {"cursor": "x"}, {"cursor": "9" * 19}]
)
def test_a_bad_page_is_a_422(http: httpx.Client, params: dict[str, Any]) -> None:
    response = http.get(f"/v1/jobs/{uuid.uuid4()}/snapshots", params=params)
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"


def _job(session: Session, *, attempt: int = 1, status: str = "RUNNING") -> Job:
    job = Job(
        name="h", principal="someone", definition={}, status=status, attempt=attempt,
    )  # fmt: skip
    session.add(job)
    session.commit()
    return job


def _count(session: Session, job_id: uuid.UUID) -> int:
    query = select(func.count()).select_from(SnapshotHistory)
    return int(session.execute(query.where(SnapshotHistory.job_id == job_id)).scalar_one())


def test_only_the_last_n_are_kept_and_a_retried_start_keeps_its_first_time(
    db_session: Session,
) -> None:
    job = _job(db_session)
    t0 = datetime.now(UTC)
    for n in range(1, 8):
        at = t0 + timedelta(seconds=n)
        snapshot_history.started(db_session, job.id, 1, n, n, at, keep=5)
        db_session.commit()
    retried = t0 + timedelta(hours=1)
    snapshot_history.started(db_session, job.id, 1, 7, 7, retried, keep=5)
    db_session.commit()
    assert _count(db_session, job.id) == 5
    page = snapshot_history.page(db_session, job, limit=10, cursor=None)
    assert [item["snapshot_id"] for item in page.items] == [7, 6, 5, 4, 3]
    assert page.items[0]["started_at"] == t0 + timedelta(seconds=7)
    assert all(item["state"] == "in_progress" for item in page.items)


def test_failed_and_abandoned_snapshots_say_why(db_session: Session) -> None:
    job = _job(db_session, attempt=2)
    at = datetime.now(UTC)
    for n in (1, 2, 3, 4):
        snapshot_history.started(db_session, job.id, 1 if n == 1 else 2, n, n, at, keep=100)
    db_session.commit()
    missing = ReplicasMissing("snapshot 2: 0 of backup_count=1 replicas acknowledged")
    snapshot_history.ended(db_session, job.id, 2, 2, missing, at)
    snapshot_history.ended(db_session, job.id, 2, 3, StaleFencingToken(job.id, 1, 2), at)
    db_session.commit()
    records = {r["snapshot_id"]: r for r in snapshot_history.page(
        db_session, job, limit=10, cursor=None).items}  # fmt: skip
    # Attempt 1's worker was lost while it wrote snapshot 1: nothing can commit it now.
    assert records[1]["state"] == "abandoned"
    assert records[1]["reason"] == "attempt 1 ended before the snapshot committed"
    assert records[2]["state"] == "failed"
    assert records[2]["reason"].startswith("ReplicasMissing: snapshot 2: 0 of backup_count=1")
    assert records[3]["state"] == "abandoned" and "StaleFencingToken" in records[3]["reason"]
    assert records[4]["state"] == "in_progress" and records[4]["reason"] is None
    assert records[2]["duration_ms"] is None  # only a committed snapshot has a duration
    job.status = "CANCELLED"  # the job ended with snapshot 4 in flight
    db_session.commit()
    page = snapshot_history.page(db_session, job, limit=10, cursor=None)
    assert {r["snapshot_id"]: r["state"] for r in page.items}[4] == "abandoned"


def test_another_principals_history_is_not_found(http: httpx.Client, db_session: Session) -> None:
    job = _job(db_session)  # owned by "someone", not the test's token
    snapshot_history.started(db_session, job.id, 1, 1, 1, datetime.now(UTC), keep=100)
    db_session.commit()
    response = http.get(f"/v1/jobs/{job.id}/snapshots")
    assert response.status_code == 404, response.text
    assert TOKEN not in response.text


def test_a_commit_whose_start_was_not_recorded_is_in_the_history_all_the_same(
    db_session: Session,
) -> None:
    job = _job(db_session)
    written = datetime.now(UTC)
    stats = {
        "vertices": {"w": {"keys": 3, "rows": 7, "bytes": 512, "schema": "..."}},
        "replication": {"backup_count": 1, "replicas": 0, "under_replicated": True},
    }
    later = written + timedelta(milliseconds=40)
    snapshot_history.committed(
        db_session, job.id, 1, 5, 5, stats=stats, written_at=written, at=later
    )
    db_session.commit()
    (record,) = snapshot_history.page(db_session, job, limit=10, cursor=None).items
    assert record["state"] == "committed" and record["duration_ms"] == 40.0
    assert record["vertices"] == {"w": {"keys": 3, "rows": 7, "bytes": 512}}
    assert (record["bytes"], record["rows"]) == (512, 7)
    assert record["backup_count"] == 1 and record["replicas"] == 0
    assert record["under_replicated"] is True


def test_a_snapshot_that_cannot_get_its_backups_is_failed_with_its_reason(
    http: httpx.Client, worker: Worker
) -> None:
    """The session's Redis has no replica: a job that requires one fails its first snapshot
    (after the 30 s a write waits for replicas), and the history says why."""
    del worker
    body = counted_stream("no-replicas")
    body["config"] |= {"backup_count": 1, "require_backups": True}
    job_id = http.post("/v1/jobs", json=body).json()["id"]
    view = finished(http, job_id)
    assert view["status"] == "FAILED", view
    history = http.get(f"/v1/jobs/{job_id}/snapshots").json()["history"]
    failed = [h for h in history if h["state"] == "failed"]
    assert len(failed) == 1, history
    assert failed[0]["reason"].startswith("ReplicasMissing: snapshot ")
    assert "0 of backup_count=1 replicas" in failed[0]["reason"]
    assert failed[0]["ended_at"] is not None and failed[0]["duration_ms"] is None
    assert not [h for h in history if h["state"] == "committed"]
