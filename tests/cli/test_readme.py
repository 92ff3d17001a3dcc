"""The README's walk-throughs run as written: its curl block, then its CLI block, with bash in
a folder where ``jetspark up`` (as ``make up`` starts it) keeps ``.jetspark/``; only the API's
address is given, through ``JETSPARK_URL`` as the README says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import process_env
from tests.cli.test_up import jetspark_up

# A cold `jetspark up`, then every command of the README one after another: longer than the
# suite's 300 s on two loaded cores.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
RUN_DEADLINE_S = 600  # a cold worker's first jobs, a stream, on two shared cores


def block(name: str) -> str:
    """The shell block between ``<!-- name:begin ... -->`` and ``<!-- name:end -->``."""
    found = re.search(
        rf"<!-- {name}:begin[^>]*-->\n```sh\n(.*?)```\n<!-- {name}:end -->",
        (ROOT / "README.md").read_text(),
        re.DOTALL,
    )
    assert found, f"README.md has no {name} block"
    return found.group(1)


def test_the_blocks_are_there_and_set_what_they_use() -> None:
    walkthrough = block("walkthrough")
    assert "ID=$(" in walkthrough and 'AUTH="Authorization: Bearer' in walkthrough
    assert "$TOKEN" not in walkthrough
    assert "ID=$(jetspark submit" in block("cli")


def test_the_readme_runs_as_written(jetspark_home: Path) -> None:
    folder = jetspark_home.parent
    (folder / "examples").symlink_to(ROOT / "examples")
    with jetspark_up(jetspark_home, "--workers", "1") as stack:
        bin_dir = str(Path(sys.executable).parent)
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block("walkthrough") + block("cli")],
            cwd=folder,
            env=process_env(JETSPARK_URL=stack.url, PATH=f"{bin_dir}:{os.environ['PATH']}"),
            capture_output=True,
            text=True,
            timeout=RUN_DEADLINE_S,
            check=False,
        )
        assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    out = done.stdout
    assert re.search(r'"name":"word-count","status":"[A-Z]+"', out)  # its status at once
    assert "event: status" in out and "event: end" in out  # followed to its end
    assert '"key":"question","count":1' in out  # its results
    assert (folder / "dag.svg").read_text().lstrip().startswith(("<svg", "<?xml"))
    assert '"name":"windows-1"' in out  # the stream's snapshot, exported
    assert '"name":"ticks"' in out and '"status":"CANCELLED"' in out
    assert re.search(r'"key":"hello","canonical_hex":"68656c6c6f0*","partition_id":\d+', out)
    assert "jetspark_jobs" in out
    # The CLI block: the word count's results as CSV, the stream's snapshot, the cancel.
    assert "key,count\n" in out and "question,1\n" in out
    assert re.search(r"snapshot \d+ \(epoch \d+\) exported as 'windows-2'", out)
    assert "snapshot 'windows-2' deleted" in out
    assert re.search(r"^[0-9a-f-]{36} CANCELLED$", out, re.MULTILINE)
    assert "COMPLETED" in done.stderr  # the --wait progress, on stderr
