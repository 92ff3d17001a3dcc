"""A Python processor's own log lines, kept in its job's log from inside the Spark task.

The worker sets the Spark local property ``TASK_LOGS_KEY`` on a job's thread when it keeps the
job's lines (``jetspark.joblogs``): the job id and the log's limits, as JSON. A task whose plan
names the job's Redis and that sees the property keeps, while it runs, every ``logging`` record
(INFO and above), every line printed to stdout or stderr and the error that ends it in the
job's capped list, told live as ``log`` events too, each with the vertex and processor index.
At most ``task_max_lines`` per task; a Redis error never fails the task.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TextIO

from jetspark.joblogs import JobLogSink, exception_chain
from jetspark.processor.runtime.tasklet import FAILURE_MARKER
from jetspark.queue.keys import Keys
from jetspark.settings import JobLogSettings
from worker.engine.contract import RedisTarget
from worker.engine.python.live import task_redis

TASK_LOGS_KEY = "jetspark.job.logs"
"""Spark local property: ``{"job", "max_lines", "max_line_chars", "task_max_lines"}``."""


def task_logs_property(job_id: uuid.UUID, settings: JobLogSettings) -> str:
    """The property's value for a job whose lines are kept with these limits."""
    return json.dumps(
        {
            "job": str(job_id),
            "max_lines": settings.max_lines,
            "max_line_chars": settings.max_line_chars,
            "task_max_lines": settings.task_max_lines,
        }
    )


class TaskLog:
    """The lines of one task: tagged with its vertex and processor, counted, capped."""

    def __init__(self, sink: JobLogSink, vertex: str, index: int, max_lines: int) -> None:
        self.sink, self.vertex, self.index, self.max_lines = sink, vertex, index, max_lines
        self.kept = self.dropped = 0
        self.busy = threading.local()  # a line being written logs nothing more (redis-py)

    def write(
        self,
        level: str,
        event: str,
        *,
        source: str,
        exception: BaseException | None = None,
        over_cap: bool = False,
    ) -> None:
        if getattr(self.busy, "on", False):
            return
        if self.kept >= self.max_lines and not over_cap:
            self.dropped += 1
            return
        self.busy.on = True
        try:
            limit = self.sink.settings.max_line_chars
            line: dict[str, Any] = {
                "at": datetime.now(UTC).isoformat(timespec="milliseconds"),
                "level": level,
                "event": event[:limit],
                "fields": {"vertex": self.vertex, "processor": self.index, "source": source},
            }
            if exception is not None:
                line["exception"] = exception_chain(exception, limit)
            self.kept += 1
            with contextlib.suppress(Exception):  # never fails the task
                self.sink.write(line)
        finally:
            self.busy.on = False

    def close(self) -> None:
        if self.dropped:
            self.write(
                "warning",
                f"{self.dropped} more lines of this task were not kept "
                f"(JETSPARK_JOB_LOGS_TASK_MAX_LINES={self.max_lines})",
                source="jetspark",
                over_cap=True,
            )


class _Handler(logging.Handler):
    def __init__(self, log: TaskLog) -> None:
        super().__init__(logging.INFO)
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            error = record.exc_info[1] if record.exc_info else None
            self.log.write(
                record.levelname.lower(),
                record.getMessage(),
                source=f"logging:{record.name}",
                exception=error,
            )


class _Lines(io.TextIOBase):
    """Passes writes on to ``stream`` and keeps each whole line in the task's log."""

    def __init__(self, stream: TextIO, log: TaskLog, level: str, source: str) -> None:
        self.stream, self.log, self.level, self.source = stream, log, level, source
        self.pending = ""

    def write(self, text: str) -> int:
        written = self.stream.write(text)
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if line.strip():
                self.log.write(self.level, line, source=self.source)
        if len(self.pending) > self.log.sink.settings.max_line_chars:
            self.flush_line()
        return written

    def flush_line(self) -> None:
        if self.pending.strip():
            self.log.write(self.level, self.pending, source=self.source)
        self.pending = ""

    def flush(self) -> None:
        self.stream.flush()

    def fileno(self) -> int:
        return self.stream.fileno()


def _target(redis: RedisTarget | None) -> tuple[RedisTarget, dict[str, Any]] | None:
    from pyspark import TaskContext

    task = TaskContext.get()
    raw = task.getLocalProperty(TASK_LOGS_KEY) if task is not None else None
    if redis is None or not raw:
        return None
    try:
        told: dict[str, Any] = json.loads(raw)
        uuid.UUID(told["job"])
    except (ValueError, KeyError, TypeError):
        return None
    return redis, told


@contextmanager
def task_logs(redis: RedisTarget | None, vertex: str, index: int) -> Iterator[None]:
    """While the block runs, this task's log lines go to its job's log (see the module)."""
    target = _target(redis)
    if target is None:
        yield
        return
    where, told = target
    settings = JobLogSettings(
        max_lines=told.get("max_lines", 10_000), max_line_chars=told.get("max_line_chars", 8_000)
    )
    job_id = uuid.UUID(told["job"])
    sink = JobLogSink(task_redis(where.url, where.cluster), Keys(where.namespace), job_id, settings)
    log = TaskLog(sink, vertex, index, int(told.get("task_max_lines", 1_000)))
    handler, root = _Handler(log), logging.getLogger()
    level = root.level
    root.addHandler(handler)
    if root.getEffectiveLevel() > logging.INFO:
        root.setLevel(logging.INFO)
    out, err = sys.stdout, sys.stderr
    stdout, stderr = _Lines(out, log, "info", "stdout"), _Lines(err, log, "warning", "stderr")
    sys.stdout, sys.stderr = stdout, stderr
    try:
        yield
    except Exception as error:
        first = str(error).split("\n", 1)[0].split(FAILURE_MARKER, 1)[0].strip()
        log.write("error", first or type(error).__name__, source="task", exception=error,
                  over_cap=True)  # fmt: skip
        raise
    finally:
        sys.stdout, sys.stderr = out, err
        stdout.flush_line()
        stderr.flush_line()
        root.removeHandler(handler)
        root.setLevel(level)
        log.close()
