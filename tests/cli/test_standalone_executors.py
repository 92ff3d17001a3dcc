"""A `jetspark worker` on a Spark standalone cluster whose executors run a bare Python.

The executors' interpreter has pyarrow and pandas only: the worker ships the engine, the
allowed processor modules and their libraries itself (``worker.executor_code``). A word
count, a Python-processor job and an exactly-once windowed stream give exact results.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
import redis
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.db.tables import JobResult
from jetspark.queue.keys import Keys
from tests.bare_python import bare_python, lacks
from tests.cli.conftest import EXAMPLE, log_of, poll
from tests.cli.worker_processes import (
    WorkerProcess,
    job_when,
    read_job,
    submit,
    wait_heartbeating,
)
from tests.standalone import standalone_cluster
from tests.worker.test_streaming import tumbling_reference, windowed_stream

pytestmark = pytest.mark.slow

LINES = ["To be or not to be", "that is the question", "", "be quick, be brave"]
EVENTS = 3000


@pytest.fixture(scope="session")
def executor_python(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    cache = getattr(request.config, "cache", None)
    root = cache.mkdir("bare-executor-python") if cache is not None else None
    return bare_python(Path(root) if root else tmp_path_factory.mktemp("bare-python"))


def word_count() -> dict[str, Any]:
    body: dict[str, Any] = json.loads(EXAMPLE.read_text())
    body["dag"]["vertices"][0]["params"]["items"] = [{"line": line} for line in LINES]
    body["config"] = {}  # members: the executors the worker sees
    return body


def python_word_count() -> dict[str, Any]:
    def python(name: str, cls: str, **args: Any) -> dict[str, Any]:
        return {"name": name, "processor": "python", "params": {"class": cls, "args": args}}

    return {
        "name": "python-word-count",
        "dag": {
            "vertices": [
                {"name": "lines", "processor": "source.items",
                 "params": {"items": [{"line": line} for line in LINES]}},
                python("tokenize", "jetspark.example_processors.words:Tokenizer"),
                python("accumulate", "jetspark.example_processors.words:Accumulator"),
                python(
                    "combine",
                    "jetspark.example_processors.words:Accumulator",
                    key="key",
                    add="count",
                ),
                {"name": "out", "processor": "sink.results"},
            ],
            "edges": [
                {"from": "lines", "to": "tokenize"},
                {"from": "tokenize", "to": "accumulate", "routing": "partitioned", "key": "word"},
                {"from": "accumulate", "to": "combine", "routing": "partitioned", "key": "key",
                 "distributed": True},
                {"from": "combine", "to": "out"},
            ],
        },
        "config": {"local_parallelism": 1},
    }  # fmt: skip


def exactly_once_stream() -> dict[str, Any]:
    body = windowed_stream("windows", count=EVENTS, members=1)
    del body["config"]["members"]
    return body


def results(sessions: sessionmaker[Session], job_id: uuid.UUID) -> list[dict[str, Any]]:
    with sessions() as session:
        rows = session.execute(select(JobResult.item).where(JobResult.job_id == job_id))
        return list(rows.scalars())


def executor_interpreters(work_dirs: list[Path]) -> set[str]:
    """The interpreters PySpark's daemons run under, for executors in ``work_dirs``."""
    found = set()
    for proc in psutil.process_iter(["cmdline", "cwd"]):
        cmdline, cwd = proc.info["cmdline"] or [], proc.info["cwd"] or ""
        if "pyspark.daemon" in cmdline and any(cwd.startswith(str(w)) for w in work_dirs):
            found.add(cmdline[0])
    return found


def test_executors_without_jetspark_give_exact_results(
    start_worker: Callable[..., WorkerProcess],
    sessions: sessionmaker[Session],
    redis_client: redis.Redis,
    keys: Keys,
    executor_python: Path,
    tmp_path: Path,
) -> None:
    for module in ("jetspark", "worker", "pydantic", "mmh3", "redis"):
        assert lacks(executor_python, module, tmp_path), f"the bare Python has {module}"
    with standalone_cluster(tmp_path / "spark", workers=2, cores=1, memory="1g") as cluster:
        conf = {
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.executor.cores": 1,
            "spark.executor.memory": "512m",
            "spark.cores.max": 2,
            "spark.pyspark.python": str(executor_python),
            # Both executors registered before the first claim: members = 2.
            "spark.scheduler.minRegisteredResourcesRatio": 1.0,
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
        }
        worker = start_worker(
            "cluster",
            JETSPARK_SPARK_MASTER=cluster.master_url,
            JETSPARK_SPARK_CONF=json.dumps(conf),
            JETSPARK_WORKER_MAX_CONCURRENT_JOBS="3",
            JETSPARK_STREAM_MAX_ITEMS_PER_EPOCH="500",  # several epochs, each snapshotted
        )
        wait_heartbeating(redis_client, keys, [worker])
        jobs = {
            "words": submit(sessions, redis_client, keys, word_count()),
            "python": submit(sessions, redis_client, keys, python_word_count()),
            "stream": submit(sessions, redis_client, keys, exactly_once_stream()),
        }
        for name, job_id in jobs.items():
            done = poll(
                job_when(sessions, job_id, lambda job: job.status in {"COMPLETED", "FAILED"}),
                deadline_s=300,
                what=f"the {name} job ended\n{log_of(worker.log, 60)}",
                every_s=0.5,
            )
            assert done.status == "COMPLETED", (
                f"{name}: {done.error_type}: {done.error_message}\n{log_of(worker.log, 60)}"
            )
            assert done.plan is not None and done.plan["members"] == 2, (
                f"{name}: planned for the two executors"
            )
        interpreters = executor_interpreters(cluster.work_dirs)

    # split(lower(line), '\\W+') as Spark does it: an empty line is one empty word.
    expected = Counter(w for line in LINES for w in re.split(r"\W+", line.lower()))
    got = {r["key"]: r["count"] for r in results(sessions, jobs["words"])}
    assert got == dict(expected)
    got = {r["key"]: r["count"] for r in results(sessions, jobs["python"])}
    assert got == dict(Counter(" ".join(LINES).lower().split()))
    windows = [
        ((r["window_start"], r["key"]), (r["n"], r["total"]))
        for r in results(sessions, jobs["stream"])
    ]
    assert sorted(windows) == sorted(tumbling_reference(EVENTS).items())
    assert read_job(sessions, jobs["stream"]).attempt == 1
    assert interpreters == {str(executor_python)}, interpreters
