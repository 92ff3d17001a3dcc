"""Per-job logs in Redis: lines tagged with a job id (structlog contextvars) kept, capped,
numbered for paging, published as ``log`` events; a failure's exception chain kept."""

from __future__ import annotations

import json
import threading
import uuid

import pytest
import redis
import structlog

from jetspark import joblogs
from jetspark.queue.keys import Keys

log = structlog.get_logger("jetspark.test")


@pytest.fixture
def keys(redis_namespace: str) -> Keys:
    return Keys(f"{redis_namespace}-logs-{uuid.uuid4().hex[:6]}")


def test_a_threads_lines_are_kept_with_its_job_and_paged(
    redis_client: redis.Redis, keys: Keys
) -> None:
    job, other = uuid.uuid4(), uuid.uuid4()

    def job_thread() -> None:
        with joblogs.job_logs(redis_client, keys, job):
            for i in range(5):
                log.info("step", i=i)
        log.info("after the job")  # no longer the job's

    runner = threading.Thread(target=job_thread)
    runner.start()
    runner.join()
    log.info("another job's line", job=str(other))  # not registered: not kept
    page = joblogs.read(redis_client, keys, job, 0, 100)
    assert [(line["seq"], line["event"], line["fields"]["i"]) for line in page.lines] == [
        (i, "step", i) for i in range(5)
    ]
    assert page.total == 5 and page.first == 0
    assert [line["seq"] for line in joblogs.read(redis_client, keys, job, 3, 1).lines] == [3]
    assert joblogs.read(redis_client, keys, other, 0, 10).total == 0
    published: list[tuple[str, dict[str, str]]] = redis_client.xrange(keys.job_events(job))  # type: ignore[assignment]
    assert [json.loads(f["data"])["seq"] for _, f in published if f["kind"] == "log"] == list(
        range(5)
    )


def test_lines_past_the_cap_are_dropped_oldest_first(
    redis_client: redis.Redis, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JETSPARK_JOB_LOGS_MAX_LINES", "3")
    job = uuid.uuid4()
    with joblogs.job_logs(redis_client, keys, job):
        for i in range(7):
            log.info("line", i=i)
    page = joblogs.read(redis_client, keys, job, 0, 100)
    assert (page.total, page.first) == (7, 4)
    assert [(line["seq"], line["fields"]["i"]) for line in page.lines] == [(4, 4), (5, 5), (6, 6)]


def test_a_jobs_log_expires_after_its_last_line(
    redis_client: redis.Redis, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line written after its job was deleted (a stopping worker's last) does not stay."""
    monkeypatch.setenv("JETSPARK_JOB_LOGS_TTL_S", "600")
    job = uuid.uuid4()
    with joblogs.job_logs(redis_client, keys, job):
        log.info("a last line")
    for name in (keys.job_logs(job), keys.job_log_count(job)):
        assert 0 < int(redis_client.ttl(name)) <= 600


def test_a_failure_keeps_its_exception_chain(redis_client: redis.Redis, keys: Keys) -> None:
    job = uuid.uuid4()

    def inner() -> None:
        raise ValueError("the cause")

    with joblogs.job_logs(redis_client, keys, job):
        try:
            try:
                inner()
            except ValueError as cause:
                raise RuntimeError("vertex 'v' failed") from cause
        except RuntimeError as error:
            log.warning("job failed", **{joblogs.EXCEPTION_KEY: error})
    [line] = joblogs.read(redis_client, keys, job, 0, 10).lines
    chain = line["exception"]
    assert [(c["type"], c["message"]) for c in chain] == [
        ("RuntimeError", "vertex 'v' failed"),
        ("ValueError", "the cause"),
    ]
    assert "in inner" in chain[1]["traceback"]


def test_an_attempt_ending_after_the_next_was_claimed_keeps_the_next_ones_lines(
    redis_client: redis.Redis, keys: Keys
) -> None:
    """A resume or restart claims the next attempt while the last one's thread still winds
    down; that thread's end must not stop the new attempt's lines from being kept."""
    job = uuid.uuid4()
    old_started, old_may_end = threading.Event(), threading.Event()

    def old_attempt() -> None:
        with joblogs.job_logs(redis_client, keys, job):
            old_started.set()
            old_may_end.wait(10)

    runner = threading.Thread(target=old_attempt)
    runner.start()
    assert old_started.wait(10)
    joblogs.register(redis_client, keys, job)  # the worker's claim of the next attempt
    old_may_end.set()
    runner.join()
    log.info("job claimed", job=str(job), attempt=2)
    assert [line["event"] for line in joblogs.read(redis_client, keys, job, 0, 10).lines] == [
        "job claimed"
    ]
