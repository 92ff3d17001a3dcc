"""`jetspark up --api-workers N`: N API processes behind one port, all stopped with the stack."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import psutil
import pytest

from tests.cli.conftest import EXAMPLE, poll
from tests.cli.test_up import api_processes, jetspark_up
from tests.live_server import serving_processes

pytestmark = pytest.mark.slow


def test_up_serves_one_port_from_several_api_processes(jetspark_home: Path) -> None:
    with jetspark_up(jetspark_home, "--workers", "0", "--api-workers", "2") as stack:
        (api,) = api_processes(stack)
        # uvicorn's supervisor and its two serving processes.
        poll(lambda: len(serving_processes(api.pid)) == 2, deadline_s=60, what="two API processes")
        serving = serving_processes(api.pid)
        # Both have started the app (each its own PostgreSQL connection, opened by the
        # lifespan), not only been spawned: on a loaded machine one still importing took the
        # requests' place at none, and stopping it waited out its start past the 20 s grace.
        postgres_port = int((stack.home / "postgres.port").read_text())
        poll(
            lambda: all(uses_port(p, postgres_port) for p in serving),
            deadline_s=120,
            what="both API processes connected to PostgreSQL",
        )
        token = (stack.home / "token").read_text().strip()
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=stack.url, headers=headers, timeout=30) as http:
            created = http.post(
                "/v1/jobs",
                content=EXAMPLE.read_bytes(),
                headers={"Content-Type": "application/json"},
            )
            assert created.status_code == 201, created.text
            job_id = created.json()["id"]
            # Many connections, spread by the kernel over both processes: each one knows
            # the job (one PostgreSQL), and none answers anything but the job.
            for _ in range(20):
                with httpx.Client(base_url=stack.url, headers=headers, timeout=30) as fresh:
                    assert fresh.get(f"/v1/jobs/{job_id}").json()["status"] == "QUEUED"
            assert http.post(f"/v1/jobs/{job_id}/cancel").json()["status"] == "CANCELLED"
        tree = stack.tree()
        assert {p.pid for p in serving} <= {p.pid for p in tree}
        assert stack.stop(signal.SIGTERM) == 0, stack.output()
        assert not [p for p in serving if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def uses_port(process: psutil.Process, port: int) -> bool:
    """Whether ``process`` holds a TCP connection to ``port`` on this host."""
    return any(c.raddr and c.raddr.port == port for c in process.net_connections(kind="tcp"))
