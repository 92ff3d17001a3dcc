"""Streaming jobs on in-process workers: epochs committed in PostgreSQL, state in Redis,
and a job another worker takes over goes on from the last committed snapshot."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import redis
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import JobResult, Snapshot
from jetspark.jobs import service, snapshots
from jetspark.queue import stream
from jetspark.queue.keys import Keys
from tests.worker.conftest import drive_until, status_of
from worker.loop import Worker

pytestmark = pytest.mark.spark


def streaming_body(name: str, *, count: int, rate: int, guarantee: str) -> dict[str, Any]:
    return {
        "name": name,
        "dag": {
            "vertices": [
                {
                    "name": "numbers",
                    "processor": "source.sequence",
                    "params": {"count": count, "rate_per_s": rate},
                },
                {
                    "name": "stamped",
                    "processor": "insert_watermarks",
                    "params": {"timestamp": "ts", "allowed_lag_ms": 50},
                },
                {"name": "results", "processor": "sink.results"},
                {
                    "name": "by_seq",
                    "processor": "sink.redis_map",
                    "params": {"map": f"seq-{uuid.uuid4().hex[:8]}", "key": "seq"},
                },
            ],
            "edges": [
                {"from": "numbers", "to": "stamped"},
                {"from": "stamped", "to": "results", "from_ordinal": 0},
                {"from": "stamped", "to": "by_seq", "from_ordinal": 1},
            ],
        },
        "config": {
            "members": 1,
            "local_parallelism": 2,
            "processing_guarantee": guarantee,
            "snapshot_interval_ms": 300,
            "epoch_interval_ms": 300,
        },
    }


def committed_snapshot(sessions: sessionmaker[Session], job_id: uuid.UUID) -> int:
    with sessions() as session:
        found = session.execute(
            select(func.max(Snapshot.snapshot_id)).where(
                Snapshot.job_id == job_id, Snapshot.committed_at.is_not(None)
            )
        ).scalar_one_or_none()
        return int(found or 0)


def lose_workers_at_snapshots(
    make_worker: Callable[..., Worker],
    sessions: sessionmaker[Session],
    job_id: uuid.UUID,
    snapshots: tuple[int, ...],
) -> None:
    """Run ``job_id`` on a worker that is lost once each of ``snapshots`` committed (its job
    stays RUNNING until its lease ends and a new worker takes it), then to COMPLETED."""
    workers = [make_worker("a")]
    for kill, after in enumerate(snapshots):

        def reached(after: int = after) -> bool:
            return committed_snapshot(sessions, job_id) >= after

        drive_until(workers, reached, what=f"snapshot {after}", deadline_s=180)
        workers[0].stop_running_jobs()  # lost: the job stays RUNNING until its lease ends
        assert status_of(sessions, job_id) == "RUNNING"
        workers = [make_worker(f"w{kill}")]
    drive_until(workers, lambda: status_of(sessions, job_id) == "COMPLETED", deadline_s=180)


def result_seqs(sessions: sessionmaker[Session], job_id: uuid.UUID) -> list[int]:
    with sessions() as session:
        items = session.execute(select(JobResult.item).where(JobResult.job_id == job_id))
        return sorted(int(item["seq"]) for item in items.scalars())


def test_a_lost_workers_stream_goes_on_from_its_last_snapshot_exactly_once(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
    keys: Keys,
) -> None:
    # At most 300 items an epoch: at least 8 epochs however slow the machine is.
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "300")
    body = streaming_body("stream", count=2400, rate=2000, guarantee="exactly_once")
    job_id = submit(body)
    a = make_worker("a")
    drive_until(
        [a], lambda: committed_snapshot(sessions, job_id) >= 2, what="two snapshots", deadline_s=180
    )
    a.stop_running_jobs()  # A is lost: its job stays RUNNING until the lease runs out
    assert status_of(sessions, job_id) == "RUNNING"
    lost_at = committed_snapshot(sessions, job_id)

    b = make_worker("b")
    drive_until([b], lambda: status_of(sessions, job_id) == "COMPLETED", deadline_s=120)
    assert committed_snapshot(sessions, job_id) > lost_at
    assert result_seqs(sessions, job_id) == list(range(2400))
    map_key = keys.redis_map("legacy", body["dag"]["vertices"][3]["params"]["map"])
    assert redis_client.hlen(map_key) == 2400
    redis_client.delete(map_key)


def windowed_stream(
    name: str,
    *,
    count: int | None,
    members: int,
    initial_snapshot: str | None = None,
    size_ms: int = 1000,
) -> dict[str, Any]:
    """Events ``ts = seq * 7`` keyed by ``seq % 5``, counted in tumbling windows."""
    return {
        "name": name,
        "dag": {
            "vertices": [
                {
                    "name": "numbers",
                    "processor": "source.sequence",
                    "params": {"count": count, "rate_per_s": 10_000_000},
                },
                {
                    "name": "events",
                    "processor": "map",
                    "params": {"select": {"seq": "seq", "ts": "seq * 7", "k": "seq % 5"}},
                },
                {
                    "name": "stamped",
                    "processor": "insert_watermarks",
                    "params": {"timestamp": "ts", "allowed_lag_ms": 100},
                },
                {
                    "name": "windows",
                    "processor": "window",
                    "params": {
                        "timestamp": "ts",
                        "type": "tumbling",
                        "size_ms": size_ms,
                        "key": "k",
                        "aggregations": {"n": "count(*)", "total": "sum(seq)"},
                    },
                },
                {"name": "results", "processor": "sink.results", "local_parallelism": 1},
            ],
            "edges": [
                {"from": "numbers", "to": "events"},
                {"from": "events", "to": "stamped"},
                {
                    "from": "stamped",
                    "to": "windows",
                    "routing": "partitioned",
                    "key": "k",
                    "distributed": True,
                },
                {"from": "windows", "to": "results"},
            ],
        },
        "config": {
            "members": members,
            "local_parallelism": 1,
            "processing_guarantee": "exactly_once",
            "snapshot_interval_ms": 100,
            "epoch_interval_ms": 100,
            "initial_snapshot": initial_snapshot,
        },
    }


def tumbling_reference(count: int) -> dict[tuple[int, int], tuple[int, int]]:
    """(window start, key) -> (count, sum of seq) of 1 s windows over ``ts = seq * 7``."""
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for seq in range(count):
        window = (seq * 7 // 1000 * 1000, seq % 5)
        n, total = out.get(window, (0, 0))
        out[window] = (n + 1, total + seq)
    return out


def window_results(sessions: sessionmaker[Session], *job_ids: uuid.UUID) -> list[Any]:
    with sessions() as session:
        items = session.execute(select(JobResult.item).where(JobResult.job_id.in_(job_ids)))
        return [((i["window_start"], i["key"]), (i["n"], i["total"])) for i in items.scalars()]


def assert_exact_windows(sessions: sessionmaker[Session], job_id: uuid.UUID, count: int) -> None:
    """The job's windows are those of ``windowed_stream(count)``, each emitted once."""
    got = window_results(sessions, job_id)
    assert len(got) == len(dict(got)), "a window was emitted twice"
    assert dict(got) == tumbling_reference(count)


def assert_exact_windows_so_far(sessions: sessionmaker[Session], job_id: uuid.UUID) -> int:
    """An endless ``windowed_stream``'s windows, once it stopped: each emitted once, exact,
    none missing up to the newest; the newest's start."""
    got = window_results(sessions, job_id)
    windows = Counter(window for window, _ in got)
    assert not [w for w, n in windows.items() if n > 1], "a window was emitted twice"
    newest = max(start for start, _ in windows)
    reference = tumbling_reference((newest + 1000) // 7 + 1)
    assert dict(got) == {w: v for w, v in reference.items() if w[0] <= newest}
    return int(newest)


def held_by_nobody(worker: Worker, job_id: uuid.UUID) -> bool:
    worker.forget_finished()
    return job_id not in worker.held


ENDED_BY = {"cancel": "CANCELLED", "suspend": "SUSPENDED"}


def let_go(worker: Worker, sessions: sessionmaker[Session], job_id: uuid.UUID, action: str) -> None:
    """Ask for ``action`` (cancel, suspend), step ``worker`` until it let the job go, and
    check the job ended as the action says."""
    with sessions() as session:
        service.request_transition(session, job_id=job_id, action=action)
    drive_until(
        [worker], lambda: held_by_nobody(worker, job_id), what="the job let go", deadline_s=120
    )
    assert status_of(sessions, job_id) == ENDED_BY[action]


def test_a_suspended_stream_resumes_from_its_snapshot_with_exact_windows(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "300")
    job_id = submit(windowed_stream("suspended", count=3000, members=1))
    worker = make_worker("w")
    drive_until(
        [worker],
        lambda: committed_snapshot(sessions, job_id) >= 2,
        what="snapshots",
        deadline_s=180,
    )
    let_go(worker, sessions, job_id, "suspend")
    with sessions() as session:
        service.request_transition(session, job_id=job_id, action="resume")
    stream.announce(redis_client, keys, job_id)
    drive_until([worker], lambda: status_of(sessions, job_id) == "COMPLETED", deadline_s=180)
    assert_exact_windows(sessions, job_id, 3000)


def test_an_exported_snapshot_starts_a_rescaled_job_with_exact_windows(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "300")
    first = submit(windowed_stream("on two members", count=None, members=2))
    worker = make_worker("w")
    drive_until(
        [worker], lambda: committed_snapshot(sessions, first) >= 2, what="snapshots", deadline_s=180
    )
    with sessions() as session:
        service.request_transition(session, job_id=first, action="cancel")
    drive_until(
        [worker], lambda: held_by_nobody(worker, first), what="the job let go", deadline_s=120
    )
    name = f"two-members-{uuid.uuid4().hex[:8]}"
    with sessions() as session:
        exported = snapshots.export_snapshot(session, first, name)
        assert exported.name == name and exported.stats["vertices"]["windows"]["rows"] > 0
        told = snapshots.summary(exported)
        assert told["bytes"] == sum(v["bytes"] for v in told["vertices"].values()) > 0

    # A DAG whose window state has another shape is refused, saying what differs.
    with pytest.raises(snapshots.SnapshotConflict, match=r"'windows' changed .*size_ms"):
        submit(windowed_stream("other", count=3000, members=3, initial_snapshot=name, size_ms=500))
    with pytest.raises(snapshots.SnapshotConflict, match="no exported snapshot"):
        submit(windowed_stream("none", count=3000, members=3, initial_snapshot="no-such"))
    # Nor one whose keyed state would land on processors that do not own its keys.
    repartitioned = windowed_stream("1000", count=3000, members=3, initial_snapshot=name)
    repartitioned["config"]["partition_count"] = 1000
    with pytest.raises(snapshots.SnapshotConflict, match=r"partition_count is 1000 .* by 271"):
        submit(repartitioned)
    as_text = windowed_stream("text keys", count=3000, members=3, initial_snapshot=name)
    as_text["dag"]["vertices"][1]["params"]["select"]["k"] = "cast(seq % 5 as string)"
    with pytest.raises(snapshots.SnapshotConflict, match=r"key was of kind integer .* string"):
        submit(as_text)

    second = submit(windowed_stream("on three", count=3000, members=3, initial_snapshot=name))
    drive_until([worker], lambda: status_of(sessions, second) == "COMPLETED", deadline_s=180)
    got = window_results(sessions, first, second)
    assert len(got) == len(dict(got)), "a window was emitted by both jobs"
    assert dict(got) == tumbling_reference(3000)
