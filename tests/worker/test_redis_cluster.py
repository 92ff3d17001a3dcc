"""Workers on a real Redis Cluster (3 primaries + 3 replicas, ``tests.redis_cluster``): the
queue, leases and logs on the control plane's slot, snapshots spread over the primaries by
partition, a primary killed mid-stream (restarted, or lost for good: the stream goes on
under-replicated until a new node joins as a replica) and slots moved to a new primary
mid-stream. The last two streams are endless, cancelled once the checks are done: their
windows are compared up to the newest, however long a loaded machine takes."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from api.app import create_app
from jetspark import joblogs
from jetspark.db.tables import Job
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient, fail_fast
from jetspark.settings import ApiSettings, TenantSettings
from jetspark.tenants.principals import LOCAL
from tests.redis_cluster import Node, RedisClusterServers, poll
from tests.worker.conftest import drive_until, status_of
from tests.worker.test_streaming import (
    assert_exact_windows_so_far,
    committed_snapshot,
    let_go,
    window_results,
    windowed_stream,
)
from worker.loop import Worker

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture
def cluster_client(redis_cluster: RedisClusterServers) -> Iterator[RedisClient]:
    client = fail_fast(redis_cluster.url, cluster=True)
    yield client
    client.close()


@pytest.fixture
def worker_redis(cluster_client: RedisClient) -> RedisClient:
    """The workers and ``submit`` (``tests.worker.conftest``) use the cluster."""
    return cluster_client


def snapshotting_stream(
    name: str,
    count: int | None,
    submit: Callable[[dict[str, Any]], uuid.UUID],
    worker: Worker,
    sessions: sessionmaker[Session],
    *,
    rate_per_s: int | None = None,
) -> tuple[uuid.UUID, Worker]:
    """A windowed stream with one backup per snapshot, driven until two snapshots committed;
    ``rate_per_s`` paces its source; ``count`` None: endless (``cancel`` ends it)."""
    body = windowed_stream(name, count=count, members=1)
    body["config"]["backup_count"] = 1
    if rate_per_s is not None:
        body["dag"]["vertices"][0]["params"]["rate_per_s"] = rate_per_s
    job_id = submit(body)
    drive_until(
        [worker],
        lambda: committed_snapshot(sessions, job_id) >= 2,
        what="snapshots",
        deadline_s=180,
    )
    return job_id, worker


def newest_window(sessions: sessionmaker[Session], job_id: uuid.UUID) -> int:
    """The start of the newest window the job emitted (-1 before one)."""
    return max((start for (start, _), _ in window_results(sessions, job_id)), default=-1)


def went_on_then_cancelled(
    worker: Worker,
    sessions: sessionmaker[Session],
    job_id: uuid.UUID,
    *,
    window: int,
    snapshot: int | None = None,
    since: str,
    deadline_s: float,
) -> None:
    """Step ``worker`` until the endless stream emitted a window newer than ``window`` (and
    committed a snapshot newer than ``snapshot``, if given), then cancel it."""

    def went_on() -> bool:
        snapshotted = snapshot is None or committed_snapshot(sessions, job_id) > snapshot
        return snapshotted and newest_window(sessions, job_id) > window

    drive_until([worker], went_on, what=f"windows after {since}", deadline_s=deadline_s)
    let_go(worker, sessions, job_id, "cancel")


def state_keys(
    client: RedisClient, keys: Keys, job_id: uuid.UUID, sessions: sessionmaker[Session]
) -> list[str]:
    """One key per partition that holds the job's state (of snapshot 0: a key's slot is its
    partition's, whatever the snapshot), found in the latest committed snapshot."""
    found: list[str] = []

    def look() -> bool:
        latest = committed_snapshot(sessions, job_id)
        names = {p: keys.snapshot_partition(p, job_id, latest) for p in range(271)}
        pipe = client.pipeline(transaction=False)
        for name in names.values():
            pipe.exists(name)
        held = [p for p, there in zip(names, pipe.execute(), strict=True) if there]
        found[:] = [keys.snapshot_partition(p, job_id, 0) for p in held]
        return bool(found)  # empty when the next commit dropped it meanwhile: look again

    poll(look, deadline_s=30, what="the state's partitions")
    return found


def state_primary(
    redis_cluster: RedisClusterServers, held: list[str], keys: Keys
) -> tuple[Node, str]:
    """A primary holding some of the state, and one of its keys: not the node the URL names
    (a new client's first contact) and preferably not the control plane's, so what fails
    over is the snapshot store."""
    seed, control = redis_cluster.nodes[0], redis_cluster.primary_of(keys.jobs_stream)
    owners = [redis_cluster.primary_of(k) for k in held]
    candidates = [n for n in owners if n is not seed]
    assert candidates, "every partition with state sits on the seed node"
    victim = next((n for n in candidates if n is not control), candidates[0])
    return victim, held[owners.index(victim)]


def written_after(node: Node, keys: Keys, job_id: uuid.UUID, snapshot: int) -> bool:
    """``node`` holds a partition hash of a snapshot after ``snapshot`` (a replica: a copy)."""
    for name in node.client().scan_iter(match=f"{keys.namespace}:*:snapshot:{job_id}:*"):
        if int(name.rsplit(":", 1)[1]) > snapshot:
            return True
    return False


def test_a_job_is_queued_claimed_and_completed_on_the_cluster(
    redis_cluster: RedisClusterServers,
    make_worker: Callable[[str], Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    cluster_client: RedisClient,
    keys: Keys,
) -> None:
    body = {
        "name": "on the cluster",
        "dag": {
            "vertices": [
                {"name": "src", "processor": "source.items", "params": {"items": [{"n": 1}]}},
                {"name": "out", "processor": "sink.results"},
            ],
            "edges": [{"from": "src", "to": "out"}],
        },
    }
    job_id = submit(body)
    # The control plane's keys share one slot: the queue and the job's log live together.
    assert redis_cluster.slot_of(keys.jobs_stream) == redis_cluster.slot_of(keys.job_logs(job_id))
    worker = make_worker("c")
    drive_until([worker], lambda: status_of(sessions, job_id) == "COMPLETED", deadline_s=120)
    worker.forget_finished()
    # Claimed, acknowledged, deleted. The reconciler's first pass in this fresh namespace (no
    # alive marker: Redis looks as if it lost its data) may have announced the queued job
    # again before the claim; the worker drops that stale entry at its next read.
    drive_until(
        [worker],
        lambda: cluster_client.xlen(keys.jobs_stream) == 0,
        what="every entry of the queue acknowledged and deleted",
        deadline_s=60,
    )
    assert cluster_client.exists(keys.worker_heartbeat("c"))
    page = joblogs.read(cluster_client, keys, job_id, 0, 100)
    assert page.total > 0 and len(page.lines) == page.total


def test_a_killed_primarys_replica_takes_over_and_the_windows_stay_exact(
    redis_cluster: RedisClusterServers,
    make_worker: Callable[[str], Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    cluster_client: RedisClient,
    keys: Keys,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "300")
    # Endless: it is still running when its primary dies, however fast the machine.
    job_id, worker = snapshotting_stream("failover", None, submit, make_worker("f"), sessions)
    held = state_keys(cluster_client, keys, job_id, sessions)
    before = committed_snapshot(sessions, job_id)
    victim, victim_key = state_primary(redis_cluster, held, keys)
    (replica,) = redis_cluster.replicas_of(victim)

    victim.kill()
    drive_until(
        [worker],
        lambda: replica.info("replication").get("role") == "master",
        what="the replica promoted",
        deadline_s=60,
    )
    # The dead node comes back (as its supervisor would restart it): the cluster makes it a
    # replica of the promoted one, and snapshots have their backup again.
    victim.start()
    windows_at_kill = newest_window(sessions, job_id)
    went_on_then_cancelled(
        worker,
        sessions,
        job_id,
        window=windows_at_kill,
        snapshot=before,
        since="the kill",
        deadline_s=180,
    )

    assert redis_cluster.primary_of(victim_key) is replica
    drive_until(
        [worker],
        lambda: victim.info("replication").get("role") == "slave",
        what="the restarted node a replica of the promoted one",
        deadline_s=60,
    )
    assert assert_exact_windows_so_far(sessions, job_id) > windows_at_kill
    redis_cluster.wait_healthy()


def test_a_new_primary_takes_slots_mid_stream_and_the_windows_stay_exact(
    redis_cluster: RedisClusterServers,
    make_worker: Callable[[str], Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    cluster_client: RedisClient,
    keys: Keys,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "300")
    # A new primary with a replica of its own (a snapshot write WAITs for one).
    added = redis_cluster.new_node()
    redis_cluster.meet(added)
    backup = redis_cluster.new_node()
    redis_cluster.meet(backup)
    redis_cluster.make_replica(backup, added)
    # Endless: it outlasts the move however long that takes on a loaded machine.
    job_id, worker = snapshotting_stream("rebalanced", None, submit, make_worker("r"), sessions)
    held = state_keys(cluster_client, keys, job_id, sessions)
    # Every slot with state, and slots from all over, as a rebalance would move them.
    slots = sorted({redis_cluster.slot_of(k) for k in held} | set(range(0, 16384, 16)))
    moved: list[int] = []
    mover = threading.Thread(target=lambda: moved.append(redis_cluster.move_slots(slots, added)))
    mover.start()
    drive_until([worker], lambda: not mover.is_alive(), what="slots moved", deadline_s=180)
    assert moved, "the slots were moved"
    assert status_of(sessions, job_id) == "RUNNING", "the move ended after the job"
    moved_at = committed_snapshot(sessions, job_id)
    windows_at_move = newest_window(sessions, job_id)
    assert all(redis_cluster.primary_of(k) is added for k in held)
    # Snapshots after the move go to the new primary, and its replica has their backups.
    drive_until(
        [worker],
        lambda: written_after(backup, keys, job_id, moved_at),
        what="a snapshot backed up on the new primary's replica",
        deadline_s=120,
    )
    went_on_then_cancelled(
        worker,
        sessions,
        job_id,
        window=windows_at_move,
        snapshot=moved_at,
        since="the move",
        deadline_s=120,
    )
    assert committed_snapshot(sessions, job_id) > moved_at
    assert assert_exact_windows_so_far(sessions, job_id) > windows_at_move


def replication(sessions: sessionmaker[Session], job_id: uuid.UUID) -> dict[str, Any]:
    """The ``replication`` entry of the job's last snapshot (empty before one)."""
    with sessions() as session:
        job = session.get(Job, job_id)
        assert job is not None
        entry: dict[str, Any] = (job.last_snapshot or {}).get("replication") or {}
        return entry


def gauges(http: TestClient, job_id: uuid.UUID) -> tuple[float, float | None]:
    """``jetspark_jobs_under_replicated``, and the job's backups missing (None: unlisted)."""
    samples = {
        (sample.name, tuple(sample.labels.values())): sample.value
        for family in text_string_to_metric_families(http.get("/metrics").text)
        for sample in family.samples
    }
    missing = samples.get(("jetspark_job_snapshot_backups_missing", (str(job_id),)))
    return samples[("jetspark_jobs_under_replicated", ())], missing


def log_events(client: RedisClient, keys: Keys, job_id: uuid.UUID) -> list[str]:
    return [str(line["event"]) for line in joblogs.read(client, keys, job_id, 0, 10_000).lines]


def test_a_primary_lost_for_good_leaves_the_stream_under_replicated_until_a_replica_joins(
    redis_cluster: RedisClusterServers,
    make_worker: Callable[[str], Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    cluster_client: RedisClient,
    keys: Keys,
    worker_db_engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The seeds' member loss, for good: the replica is promoted and has no replica of its
    own; snapshots go on with the copies there are, the job says it is under-replicated (its
    log once, its view, ``/readyz``, ``/metrics``), and once a new node replicates the
    promoted primary, the next snapshot has its backup again and that is cleared. The
    windows stay exact."""
    # Endless at 1,000/s: it outlasts the loss, the report and the rejoin however long they
    # take on a loaded machine (it is cancelled after); epochs that take seconds there catch
    # up with up to 1,000 items each.
    monkeypatch.setenv("JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH", "1000")
    job_id, worker = snapshotting_stream(
        "lost", None, submit, make_worker("g"), sessions, rate_per_s=1000
    )
    assert replication(sessions, job_id) == {
        "backup_count": 1, "replicas": 1, "under_replicated": False, "since": None, "short": {}
    }  # fmt: skip
    held = state_keys(cluster_client, keys, job_id, sessions)
    victim, victim_key = state_primary(redis_cluster, held, keys)
    (replica,) = redis_cluster.replicas_of(victim)
    lost_id = victim.id
    app = create_app(
        database_url=worker_db_engine.url.render_as_string(hide_password=False),
        redis_url=redis_cluster.url,
        redis_cluster=True,
        redis_namespace=keys.namespace,
        api_settings=ApiSettings(tokens=[]),
        tenant_settings=TenantSettings(api_principals=[f"{LOCAL.name}:owner-token"]),
    )
    with TestClient(app, headers={"Authorization": "Bearer owner-token"}) as http:
        under_before, _ = gauges(http, job_id)

        victim.kill()  # never restarted
        drive_until(
            [worker],
            lambda: replica.info("replication").get("role") == "master",
            what="the replica promoted",
            deadline_s=60,
        )
        drive_until(
            [worker],
            lambda: replication(sessions, job_id).get("under_replicated") is True,
            what="a snapshot committed without its backup",
            deadline_s=60,
        )
        promoted = f"127.0.0.1:{replica.port}"
        entry = replication(sessions, job_id)
        assert entry["short"] == {promoted: 0} and entry["replicas"] == 0 and entry["since"]
        view = http.get(f"/v1/jobs/{job_id}").json()
        assert view["status"] == "RUNNING"
        assert view["under_replicated"] == {
            "backup_count": 1,
            "replicas": 0,
            "since": view["under_replicated"]["since"],
            "short": {promoted: 0},
        }
        ready = http.get("/readyz")
        assert ready.status_code == 200 and ready.json()["status"] == "degraded"
        assert ready.json()["checks"]["snapshot_backups"].startswith("under-replicated")
        assert "under-replicated" in ready.json()["detail"]
        under, missing = gauges(http, job_id)
        assert (under, missing) == (under_before + 1, 1)
        snapshots_under = committed_snapshot(sessions, job_id)
        drive_until(
            [worker],
            lambda: committed_snapshot(sessions, job_id) >= snapshots_under + 2,
            what="more snapshots, under-replicated",
            deadline_s=60,
        )
        warned = [e for e in log_events(cluster_client, keys, job_id) if "under-replicated" in e]
        assert len(warned) == 1, "said once, not at every snapshot"

        # A new node joins as the promoted primary's replica (valkey-cli --cluster add-node
        # --cluster-slave): the next snapshot waits for it and has its backup again.
        newcomer = redis_cluster.new_node()
        redis_cluster.meet(newcomer)
        redis_cluster.make_replica(newcomer, replica)
        drive_until(
            [worker],
            lambda: replication(sessions, job_id).get("under_replicated") is False,
            what="a snapshot with its backup again",
            deadline_s=90,
        )
        assert status_of(sessions, job_id) == "RUNNING", "the stream ended before the rejoin"
        assert replication(sessions, job_id)["replicas"] == 1
        assert http.get(f"/v1/jobs/{job_id}").json()["under_replicated"] is None
        assert http.get("/readyz").json()["status"] == "ok"
        assert gauges(http, job_id) == (under_before, None)
        assert written_after(newcomer, keys, job_id, snapshots_under)

        windows_at_rejoin = newest_window(sessions, job_id)
        went_on_then_cancelled(
            worker, sessions, job_id, window=windows_at_rejoin, since="the rejoin", deadline_s=60
        )
    assert redis_cluster.primary_of(victim_key) is replica
    assert assert_exact_windows_so_far(sessions, job_id) > windows_at_rejoin
    events = log_events(cluster_client, keys, job_id)
    assert sum("under-replicated" in e for e in events) == 1
    assert sum("have their backups again" in e for e in events) == 1
    # The lost node is forgotten (as an operator would), leaving 3 primaries + 3 replicas.
    for node in redis_cluster.running:
        node.cmd("CLUSTER", "FORGET", lost_id)
    redis_cluster.nodes.remove(victim)
    redis_cluster.wait_healthy()
