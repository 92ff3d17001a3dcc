"""The word count on a real Spark standalone cluster: a master and two workers on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.engine.cluster_driver import EXAMPLE, free_port

pytestmark = pytest.mark.slow


def spark_class() -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / "spark-class")


def wait_for_workers(ui: str, count: int, deadline_s: float = 120) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            alive = httpx.get(f"{ui}/json/", timeout=2).json().get("aliveworkers", 0)
            if alive >= count:
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.2)  # polling daemons that are starting, not synchronising threads
    raise TimeoutError(f"{count} workers did not register at {ui} within {deadline_s} s")


@pytest.fixture
def standalone_cluster(tmp_path: Path) -> Iterator[str]:
    """``spark://`` URL of a master with two one-core workers; all stopped afterwards."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(tmp_path)}
    port, ui_port = free_port(), free_port()
    master_url = f"spark://127.0.0.1:{port}"
    processes = []
    logs = []

    def start(*args: str, log_name: str) -> None:
        log = (tmp_path / log_name).open("wb")
        logs.append(log)
        processes.append(subprocess.Popen([spark_class(), *args], env=env, stdout=log, stderr=log))

    start("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
          "--webui-port", str(ui_port), log_name="master.log")  # fmt: skip
    for i in range(2):
        start("org.apache.spark.deploy.worker.Worker", master_url, "--host", "127.0.0.1",
              "--cores", "1", "--memory", "1g", "--webui-port", str(free_port()),
              "--work-dir", str(tmp_path / f"work-{i}"), log_name=f"worker-{i}.log")  # fmt: skip
    try:
        wait_for_workers(f"http://127.0.0.1:{ui_port}", 2)
        yield master_url
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        for log in logs:
            log.close()


def test_word_count_on_two_workers_matches_local_and_spreads_processors(
    standalone_cluster: str,
) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "tests.engine.cluster_driver", standalone_cluster],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"},
    )
    assert run.returncode == 0, run.stderr[-4000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    body = json.loads(EXAMPLE.read_text())
    lines = [item["line"] for item in body["dag"]["vertices"][0]["params"]["items"]]
    expected = Counter(word for line in lines for word in line.split())
    assert {r["key"]: r["count"] for r in report["results"]} == dict(expected)
    assert len(report["executors"]) == 2
    # Processors of the 4-processor stages ran on both executors.
    wide = [t for t in report["tasks"] if t["tasks"] == 4]
    assert {t["partition"] for t in wide} == {0, 1, 2, 3}
    assert {t["executor"] for t in wide} == set(report["executors"])
