"""The client commands on jobs a real worker runs: a word count from ``submit --wait`` to its
results, logs and deletion; a stream suspended, resumed, snapshotted, restarted and cancelled;
a failure's exit code; the live progress line on a terminal.

The API and the worker (a thread on the session's SparkSession) have a database and a Redis
namespace of their own, so the jobs other CLI tests leave queued are not run here. Every
command runs as the console script, in a process of its own, as a user runs it.
"""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import select
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from pyspark.sql import SparkSession
from sqlalchemy.orm import sessionmaker

from api.app import create_app
from jetspark.queue.keys import Keys
from jetspark.sdk import Client
from jetspark.settings import ApiSettings, WorkerSettings
from tests.api.conftest import TOKEN
from tests.cli.conftest import EXAMPLE, JETSPARK, process_env
from tests.databases import fresh_engine
from tests.live_server import live_server
from tests.polling import poll
from worker.engine import run_job
from worker.loop import Worker

pytestmark = [pytest.mark.slow, pytest.mark.spark]

WORDS = Counter("to be or not to be that is the question".split())


@dataclass
class Stack:
    url: str
    worker: Worker


@pytest.fixture(scope="module")
def stack(
    spark: SparkSession, server_database_url: str, redis_url: str, redis_namespace: str
) -> Iterator[Stack]:
    namespace = f"{redis_namespace}-cli-jobs"
    with fresh_engine(server_database_url, "jetspark_cli_jobs", pool_size=5) as engine:
        api = create_app(
            database_url=engine.url.render_as_string(hide_password=False),
            redis_url=redis_url,
            redis_namespace=namespace,
            api_settings=ApiSettings(tokens=[TOKEN]),
        )
        worker = Worker(
            spark=spark,
            sessions=sessionmaker(engine, expire_on_commit=False),
            client=redis.Redis.from_url(redis_url, decode_responses=True),
            keys=Keys(namespace),
            engine_run=run_job,
            settings=WorkerSettings(lease_s=5, heartbeat_s=0.2, poll_block_ms=100),
        )
        thread = threading.Thread(target=worker.run, name="cli-jobs-worker", daemon=True)
        with live_server(api) as url:
            thread.start()
            yield Stack(url, worker)
            worker.stop()
            thread.join(timeout=30)
            worker.stop_running_jobs()


def run(stack: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [JETSPARK, *args, "--url", stack.url, "--token", TOKEN],
        env=process_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"{result.returncode}: {result.stdout}\n{result.stderr}"
    return result.stdout


def job_file(tmp_path: Path, body: dict[str, Any]) -> Path:
    path = tmp_path / f"{body['name']}.json"
    path.write_text(json.dumps(body))
    return path


def test_a_word_count_from_submit_wait_to_results_logs_and_delete(
    stack: Stack, tmp_path: Path
) -> None:
    submitted = run(stack, "submit", str(EXAMPLE), "--wait")
    job_id = ok(submitted).strip()
    progress = submitted.stderr.strip().splitlines()
    assert progress[0].startswith("QUEUED") and progress[-1].startswith("COMPLETED   attempt=1")

    as_jsonl = [
        json.loads(line)
        for line in ok(run(stack, "results", job_id, "--format", "jsonl")).splitlines()
    ]
    assert {r["key"]: r["count"] for r in as_jsonl} == WORDS
    as_csv = list(csv.DictReader(io.StringIO(ok(run(stack, "results", job_id, "--format", "csv")))))
    assert {r["key"]: int(r["count"]) for r in as_csv} == WORDS
    header, *rows = ok(run(stack, "results", job_id)).splitlines()
    assert header.split() == list(as_jsonl[0]) and len(rows) == len(WORDS)
    wrong = run(stack, "results", job_id, "--format", "xml")
    assert wrong.returncode == 2 and wrong.stderr.strip() == (
        "error: no format 'xml': one of table, jsonl, csv"
    )

    # The job has ended: -f prints what there is (its worker's last lines too) and returns.
    lines = ok(run(stack, "logs", job_id, "-f")).splitlines()
    events = [line.split(None, 3)[3] for line in lines]
    assert events[0].startswith("job claimed") and events[-1].startswith("job completed")
    assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} (INFO|WARNING) ", x) for x in lines)
    assert ok(run(stack, "logs", job_id, "--from", "1")).splitlines() == lines[1:]

    assert ok(run(stack, "delete", job_id)).strip() == f"{job_id} deleted"
    gone = run(stack, "status", job_id)
    assert gone.returncode == 2 and gone.stderr.startswith("error: Job not found (404)")


def stream(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "dag": {
            "vertices": [
                {"name": "numbers", "processor": "source.sequence",
                 "params": {"count": None, "rate_per_s": 50}},
                {"name": "out", "processor": "sink.results"},
            ],
            "edges": [{"from": "numbers", "to": "out"}],
        },
        "config": {"members": 1, "local_parallelism": 1,
                   "processing_guarantee": "exactly_once", "snapshot_interval_ms": 200},
    }  # fmt: skip


@pytest.mark.timeout(900)  # three runs of the stream (first, resumed, restarted), each claimed anew
def test_a_stream_is_suspended_resumed_snapshotted_restarted_and_cancelled(
    stack: Stack, tmp_path: Path
) -> None:
    job_id = ok(run(stack, "submit", str(job_file(tmp_path, stream("cli-stream"))))).strip()
    # A real console script follows the log meanwhile; it ends when the job does.
    following = subprocess.Popen(
        [JETSPARK, "logs", job_id, "-f", "--url", stack.url, "--token", TOKEN],
        env=process_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with Client(stack.url, TOKEN) as client:

            def status() -> str:
                return str(client.get(job_id).status.value)

            def committed() -> bool:
                return status() == "RUNNING" and "no snapshots" not in ok(
                    run(stack, "snapshots", job_id)
                )

            poll(committed, what="running with a committed snapshot")
            assert ok(run(stack, "suspend", job_id)).split() in (
                [job_id, "SUSPENDED"],
                [job_id, "RUNNING"],  # asked; the worker stops it at its snapshot
            )
            poll(lambda: status() == "SUSPENDED", what="suspended")
            assert ok(run(stack, "resume", job_id)).split() == [job_id, "QUEUED"]
            poll(committed, what="running again with a committed snapshot")

            exported = ok(run(stack, "save-snapshot", job_id, "cli-saved"))
            assert re.fullmatch(r"snapshot \d+ \(epoch \d+\) exported as 'cli-saved'\n", exported)
            header, *rows = ok(run(stack, "list-snapshots", job_id)).splitlines()
            assert header.split()[:3] == ["SNAPSHOT", "EPOCH", "NAME"]
            assert "cli-saved" in [row.split()[2] for row in rows]

            attempt = client.get(job_id).attempt
            ok(run(stack, "restart", job_id))
            poll(
                lambda: status() == "RUNNING" and client.get(job_id).attempt > attempt,
                what="running as a new attempt",
            )

            def claims_logged() -> bool:  # the worker logs the claim after marking it RUNNING
                return ok(run(stack, "logs", job_id)).count(" job claimed") >= 3

            poll(claims_logged, what="the third claim in the job's log")
            assert ok(run(stack, "cancel", job_id)).split() == [job_id, "CANCELLED"]
            out, err = following.communicate(timeout=120)
            assert following.returncode == 0, err
            claimed = [line for line in out.splitlines() if " job claimed" in line]
            assert len(claimed) >= 3, out  # the first run, after resume, after restart
            deleted = ok(run(stack, "delete-snapshot", job_id, "cli-saved"))
            assert deleted == "snapshot 'cli-saved' deleted\n"
    finally:
        if following.poll() is None:
            following.kill()
            following.wait()


def test_a_failed_job_exits_1_naming_its_error(stack: Stack, tmp_path: Path) -> None:
    failing = {
        "name": "cli-fails",
        "dag": {
            "vertices": [
                {"name": "items", "processor": "source.items", "params": {"items": [{"v": "x"}]}},
                {"name": "fail_on", "processor": "python",
                 "params": {"class": "jetspark.example_processors.diagnostics:FailOn",
                            "args": {"field": "v", "value": "x"}}},
                {"name": "out", "processor": "sink.results"},
            ],
            "edges": [{"from": "items", "to": "fail_on"}, {"from": "fail_on", "to": "out"}],
        },
        "config": {"members": 1, "local_parallelism": 1},
    }  # fmt: skip
    result = run(stack, "submit", str(job_file(tmp_path, failing)), "--wait")
    assert result.returncode == 1, result.stderr
    job_id = result.stdout.strip()
    last = result.stderr.strip().splitlines()[-1]
    reason = "ValueError: vertex 'fail_on' failed: ValueError: refusing v='x'"
    assert last == f"error: job {job_id} FAILED: {reason}"
    assert "\n" not in last


def read_terminal(fd: int, process: subprocess.Popen[bytes], deadline_s: float) -> bytes:
    """Everything the process writes to its terminal until it exits."""
    seen = b""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the other side closed: the process is gone
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    return seen


def test_submit_wait_draws_one_live_line_on_a_terminal(stack: Stack) -> None:
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [JETSPARK, "submit", str(EXAMPLE), "--wait", "--url", stack.url, "--token", TOKEN],
        env=process_env(TERM="xterm-256color", COLUMNS="160"),
        stdin=follower,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    try:
        shown = read_terminal(leader, process, deadline_s=180).decode("utf-8", "replace")
        assert process.wait(timeout=30) == 0, shown
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
    assert "\x1b[?25l" in shown  # rich's live display hides the cursor while it redraws
    assert "\x1b[2K" in shown  # and rewrites its line in place
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)
    assert re.search(r"✔ word-count\s+COMPLETED\s+attempt 1\s+items in 2 out 8\s+ran", text), text
    assert not re.search(r"^COMPLETED   attempt=", text, re.MULTILINE)  # not the plain lines
