"""A Spark task's own lines (``worker.engine.python.task_logs``), without Spark: capped per
task with one line saying how many were left out; printed text kept line by line."""

from __future__ import annotations

import io
import uuid

import pytest
import redis

from jetspark import joblogs
from jetspark.queue.keys import Keys
from jetspark.settings import JobLogSettings
from worker.engine.python.task_logs import TaskLog, _Lines


@pytest.fixture
def keys(redis_namespace: str) -> Keys:
    return Keys(f"{redis_namespace}-task-logs-{uuid.uuid4().hex[:6]}")


def test_a_task_keeps_at_most_its_cap_and_says_how_many_more(
    redis_client: redis.Redis, keys: Keys
) -> None:
    job = uuid.uuid4()
    sink = joblogs.JobLogSink(redis_client, keys, job, JobLogSettings(max_line_chars=100))
    log = TaskLog(sink, "v", 1, max_lines=3)
    for i in range(5):
        log.write("info", f"line {i} " + "x" * 200, source="stdout")
    log.close()
    lines = joblogs.read(redis_client, keys, job, 0, 100).lines
    assert [line["event"][:6] for line in lines[:3]] == ["line 0", "line 1", "line 2"]
    assert all(len(line["event"]) == 100 for line in lines[:3])
    assert lines[3]["event"].startswith("2 more lines of this task were not kept")
    assert lines[3]["level"] == "warning" and len(lines) == 4
    assert lines[0]["fields"] == {"vertex": "v", "processor": 1, "source": "stdout"}


def test_printed_text_is_passed_on_and_kept_a_line_at_a_time(
    redis_client: redis.Redis, keys: Keys
) -> None:
    job = uuid.uuid4()
    log = TaskLog(joblogs.JobLogSink(redis_client, keys, job), "v", 0, max_lines=100)
    console = io.StringIO()
    lines = _Lines(console, log, "info", "stdout")
    lines.write("one\ntw")
    lines.write("o\n\nthree")
    lines.flush_line()
    assert console.getvalue() == "one\ntwo\n\nthree"
    kept = joblogs.read(redis_client, keys, job, 0, 100).lines
    assert [line["event"] for line in kept] == ["one", "two", "three"]
