"""Workers on a real Redis Cluster (3 primaries + 3 replicas, ``tests.redis_cluster``): the
queue, leases and logs on the control plane's slot, snapshots spread over the primaries by
partition, a primary killed mid-stream and slots moved to a new primary mid-stream."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from jetspark import joblogs
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient, fail_fast
from tests.redis_cluster import Node, RedisClusterServers, poll
from tests.worker.conftest import drive_until, status_of
from tests.worker.test_streaming import (
    assert_exact_windows,
    committed_snapshot,
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
    count: int,
    submit: Callable[[dict[str, Any]], uuid.UUID],
    worker: Worker,
    sessions: sessionmaker[Session],
) -> tuple[uuid.UUID, Worker]:
    """A windowed stream with one backup per snapshot, driven until two snapshots committed."""
    body = windowed_stream(name, count=count, members=1)
    body["config"]["backup_count"] = 1
    job_id = submit(body)
    drive_until(
        [worker],
        lambda: committed_snapshot(sessions, job_id) >= 2,
        what="snapshots",
        deadline_s=180,
    )
    return job_id, worker


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
    assert cluster_client.xlen(keys.jobs_stream) == 0  # claimed, acknowledged, deleted
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
    job_id, worker = snapshotting_stream("failover", 5000, submit, make_worker("f"), sessions)
    held = state_keys(cluster_client, keys, job_id, sessions)
    before = committed_snapshot(sessions, job_id)
    # A primary holding state; not the node the URL names (a new client's first contact),
    # and preferably not the control plane's, so what fails over is the snapshot store.
    seed, control = redis_cluster.nodes[0], redis_cluster.primary_of(keys.jobs_stream)
    owners = [redis_cluster.primary_of(k) for k in held]
    candidates = [n for n in owners if n is not seed]
    assert candidates, "every partition with state sits on the seed node"
    victim = next((n for n in candidates if n is not control), candidates[0])
    victim_key = held[owners.index(victim)]
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
    drive_until([worker], lambda: status_of(sessions, job_id) == "COMPLETED", deadline_s=300)

    assert redis_cluster.primary_of(victim_key) is replica
    assert victim.info("replication").get("role") == "slave"
    assert committed_snapshot(sessions, job_id) > before  # snapshots went on after the kill
    assert_exact_windows(sessions, job_id, 5000)
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
    job_id, worker = snapshotting_stream("rebalanced", 12_000, submit, make_worker("r"), sessions)
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
    assert all(redis_cluster.primary_of(k) is added for k in held)
    # Snapshots after the move go to the new primary, and its replica has their backups.
    drive_until(
        [worker],
        lambda: written_after(backup, keys, job_id, moved_at),
        what="a snapshot backed up on the new primary's replica",
        deadline_s=120,
    )
    drive_until([worker], lambda: status_of(sessions, job_id) == "COMPLETED", deadline_s=300)
    assert committed_snapshot(sessions, job_id) > moved_at
    assert_exact_windows(sessions, job_id, 12_000)
