"""Per-job logs: every structlog line about a job kept with the job, capped, and told live.

A worker running a job binds its id in structlog's context variables
(``bind_contextvars(job=...)``) and registers where the job's lines go (``register``). A
processor added to structlog's chain (``install``) copies each line whose ``job`` is
registered to a Redis list of the job (the last ``max_lines``, numbered from 0 for
``GET /v1/jobs/{id}/logs?from=&size=``) and publishes it as a ``log`` event on the job's
event stream (the SSE endpoint's). Keeping a line never fails the logging call.
"""

from __future__ import annotations

import contextlib
import json
import threading
import traceback
import uuid
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import structlog

from jetspark.queue import events
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient
from jetspark.settings import JobLogSettings

_SKIPPED = frozenset(
    {"event", "level", "timestamp", "job", "exc_info", "_record", "_from_structlog"}
)
EXCEPTION_KEY = "job_exception"
"""Give a line this field (an exception) to keep its exception chain, tracebacks included,
in the job's log; the field itself is not rendered."""
_lock = threading.Lock()
_sinks: dict[str, JobLogSink] = {}


@dataclass(frozen=True)
class LogPage:
    """Lines ``from_`` on; ``total`` lines were ever written, ``first`` is the oldest kept."""

    lines: list[dict[str, Any]]
    total: int
    first: int


_APPEND = """
local n = redis.call('INCR', KEYS[2])
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return n - 1
"""


class JobLogSink:
    """Where one job's lines go: its capped list and its event stream in Redis."""

    def __init__(
        self,
        client: RedisClient,
        keys: Keys,
        job_id: uuid.UUID,
        settings: JobLogSettings | None = None,
    ) -> None:
        self.client, self.keys, self.job_id = client, keys, job_id
        self.settings = settings or JobLogSettings()
        self.append = client.register_script(_APPEND)

    def write(self, line: dict[str, Any]) -> None:
        body = json.dumps(line, separators=(",", ":"), default=str)
        seq = self.append(
            keys=[self.keys.job_logs(self.job_id), self.keys.job_log_count(self.job_id)],
            args=[body, self.settings.max_lines, self.settings.ttl_s],
        )
        events.publish(
            self.client, self.keys, self.job_id, events.EventKind.log, {"seq": seq, **line}
        )


def read(client: RedisClient, keys: Keys, job_id: uuid.UUID, from_: int, size: int) -> LogPage:
    """Lines ``from_`` .. ``from_ + size - 1`` (those still kept), each with its ``seq``."""
    pipe = client.pipeline(transaction=True)
    pipe.get(keys.job_log_count(job_id))
    pipe.llen(keys.job_logs(job_id))
    total_raw, kept = pipe.execute()
    total = int(total_raw or 0)
    first = total - int(kept)
    start = max(from_, first) - first
    raw: Any = client.lrange(keys.job_logs(job_id), start, start + size - 1) if size else []
    lines = [{"seq": first + start + i, **json.loads(item)} for i, item in enumerate(raw or [])]
    return LogPage(lines=lines, total=total, first=first)


def exception_chain(error: BaseException, limit: int | None = None) -> list[dict[str, str]]:
    """The error and its causes, outermost first: type, message, traceback (Python's, and a
    Python processor's own as the Spark task reported it, which is in its message), each cut
    to ``limit`` characters (default: the setting)."""
    chain: list[dict[str, str]] = []
    seen: set[int] = set()
    current: BaseException | None = error
    limit = limit or JobLogSettings().max_line_chars
    while current is not None and id(current) not in seen and len(chain) < 8:
        seen.add(id(current))
        chain.append(
            {
                "type": type(current).__name__,
                "message": str(current)[:limit],
                "traceback": "".join(traceback.format_tb(current.__traceback__))[-limit:],
            }
        )
        current = current.__cause__ or (
            None if current.__suppress_context__ else current.__context__
        )
    return chain


def keep_job_lines(
    logger: Any, method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """The structlog processor: a line of a registered job goes to its sink as well."""
    error = event_dict.pop(EXCEPTION_KEY, None)  # for the job's log only, not the console
    job = event_dict.get("job")
    sink = _sinks.get(str(job)) if job is not None else None
    if sink is None:
        return event_dict
    limit = sink.settings.max_line_chars
    line: dict[str, Any] = {
        "at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "level": method if method != "exception" else "error",
        "event": str(event_dict.get("event", ""))[:limit],
    }
    fields = {k: v for k, v in event_dict.items() if k not in _SKIPPED}
    if fields:
        line["fields"] = {
            k: (v if isinstance(v, int | float | bool) else str(v)[:limit])
            for k, v in fields.items()
        }
    if isinstance(error, BaseException):
        line["exception"] = exception_chain(error, limit)
    with contextlib.suppress(Exception):  # keeping a line never fails the call, nor logs
        sink.write(line)
    return event_dict


def install() -> None:
    """Put ``keep_job_lines`` into structlog's chain (once), before its renderer."""
    with _lock:
        processors = list(structlog.get_config()["processors"])
        if keep_job_lines in processors:
            return
        at = max(len(processors) - 1, 0)  # the last one renders the line
        processors.insert(at, keep_job_lines)
        if structlog.contextvars.merge_contextvars not in processors:
            processors.insert(0, structlog.contextvars.merge_contextvars)
        structlog.configure(processors=processors)


def register(client: RedisClient, keys: Keys, job_id: uuid.UUID) -> JobLogSink:
    """From now on, lines given ``job=<job_id>`` are kept with the job (by the sink returned)."""
    install()
    sink = JobLogSink(client, keys, job_id)
    with _lock:
        _sinks[str(job_id)] = sink
    return sink


@contextmanager
def job_logs(client: RedisClient, keys: Keys, job_id: uuid.UUID) -> Iterator[None]:
    """While the block runs, every line of this thread is about ``job_id`` (and kept with
    it, as is any line given ``job=<job_id>``); afterwards the job's lines are not kept."""
    sink = register(client, keys, job_id)
    tokens = structlog.contextvars.bind_contextvars(job=str(job_id))
    try:
        yield
    finally:
        structlog.contextvars.reset_contextvars(**tokens)
        # An attempt that ends after the job's next attempt was claimed (a restart, a
        # resume) leaves the newer attempt's sink in place: its lines are still kept.
        with _lock:
            if _sinks.get(str(job_id)) is sink:
                del _sinks[str(job_id)]
