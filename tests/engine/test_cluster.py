"""The word count on a real Spark standalone cluster: a master and two workers on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine.cluster_driver import EXAMPLE
from tests.standalone import standalone_cluster as standalone

pytestmark = pytest.mark.slow


@pytest.fixture
def standalone_cluster(tmp_path: Path) -> Iterator[str]:
    """``spark://`` URL of a master with two one-core workers; all stopped afterwards."""
    with standalone(tmp_path) as cluster:
        yield cluster.master_url


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
