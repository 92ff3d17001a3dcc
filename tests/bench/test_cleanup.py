"""The benches stop every server they start, also when they are told to stop (SIGTERM).

A bench-like script starts what the benches start (embedded PostgreSQL and Valkey through
``bench.submit_latency.services``, as ``bench.scale`` and the latency benches do, and uvicorn
through ``bench.processes.uvicorn_server``, as the API benches do), then is sent SIGTERM:
nothing it started may outlive it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.polling import poll

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BENCH_LIKE = """
import sys, time
from pathlib import Path
from bench.processes import exit_on_sigterm, uvicorn_server
from bench.submit_latency import services

exit_on_sigterm()
with services(Path(sys.argv[1])) as (database, redis_url), uvicorn_server(
    "bench.bare_app:app"
) as (url, _, server):
    print(url, flush=True)
    time.sleep(600)  # until the SIGTERM
"""


def postmaster_pid(data: Path) -> int:
    return int((data.resolve() / "postmaster.pid").read_text().splitlines()[0])


def test_a_bench_told_to_stop_stops_its_servers(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JETSPARK_")}
    bench = subprocess.Popen(
        [sys.executable, "-c", BENCH_LIKE, str(tmp_path)],
        cwd=ROOT,
        env=env | {"PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert bench.stdout is not None
        assert bench.stdout.readline().startswith("http://127.0.0.1:")
        started = [
            *psutil.Process(bench.pid).children(recursive=True),
            psutil.Process(postmaster_pid(tmp_path / "pg")),  # pg_ctl detached it
        ]
        names = " ".join(" ".join(p.cmdline()) for p in started)
        assert "valkey-server" in names and "uvicorn" in names and "postgres" in names
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(timeout=60) == 128 + signal.SIGTERM
        poll(
            lambda: not [p for p in started if p.is_running() and p.status() != "zombie"],
            what="every server the bench started stopped",
            deadline_s=30,
        )
        assert not os.path.lexists(tmp_path / "pg"), "the embedded PostgreSQL data was left"
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait(timeout=10)
