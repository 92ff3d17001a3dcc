"""The one retry policy of every loop: capped exponential backoff with jitter (tenacity).

A dependency that went away (PostgreSQL restarting, Redis restarted empty, a network blip)
is waited out, never a reason for a process to exit. An outage is logged once when it
starts (a warning naming what failed) and once when it ends, not at every attempt.
"""

from __future__ import annotations

import asyncio
import threading
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis
import structlog
import tenacity
from sqlalchemy import exc as sa_exc

from jetspark.settings import RetrySettings

T = TypeVar("T")

log = structlog.get_logger("jetspark.retry")

_DISCONNECT_WORDS = (
    "connection",
    "server closed",
    "terminating connection",
    "could not connect",
    "the database system is",
    "timeout",
    "ssl syscall",
)


_CLUSTER_MOVING = (
    redis.exceptions.ClusterDownError,
    redis.exceptions.TryAgainError,
    redis.exceptions.MovedError,
    redis.exceptions.AskError,
    redis.exceptions.SlotNotCoveredError,
    redis.exceptions.MasterDownError,
)


def is_outage(error: BaseException) -> bool:
    """True when ``error`` says a server is unreachable, not that a request was wrong.

    SQLAlchemy's ``OperationalError``/``InterfaceError`` (and any DBAPI error it flagged as a
    disconnect), psycopg's own, redis-py's ``ConnectionError``/``TimeoutError``, a Redis
    Cluster's failover and slot moves (``CLUSTERDOWN``, ``TRYAGAIN``, ``MOVED``, ``ASK``) and
    a socket's ``OSError``; followed through ``__cause__``, since wrappers re-raise them.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, sa_exc.DBAPIError) and current.connection_invalidated:
            return True
        if isinstance(current, (sa_exc.OperationalError, sa_exc.InterfaceError)):
            return True
        if isinstance(current, (redis.ConnectionError, redis.TimeoutError)):
            return True
        if isinstance(current, redis.ResponseError) and "LOADING" in str(current):
            return True  # a Redis still reading its data back after a restart
        if isinstance(current, _CLUSTER_MOVING):
            return True  # a Redis Cluster failing over or moving a slot
        if isinstance(current, redis.exceptions.RedisClusterException) and any(
            word in str(current) for word in ("connect", "not covered")
        ):
            return True  # no node of a Redis Cluster reachable, or slots without a node
        if isinstance(current, (ConnectionError, TimeoutError)):
            return True
        if isinstance(current, AttributeError) and _raised_in_cluster_client(current):
            return True  # a node dropped by a slot move's topology refresh, read mid-command
        if type(current).__module__.startswith("psycopg") and any(
            word in str(current).lower() for word in _DISCONNECT_WORDS
        ):
            return True
        current = current.__cause__ or current.__context__
    return False


def _raised_in_cluster_client(error: BaseException) -> bool:
    """Whether ``error`` was raised inside redis-py's cluster client itself: caught between
    a topology refresh (after a MOVED, a failover) and a command, it reads a node, or the
    default node, that the refresh has just dropped (``'NoneType' object has no attribute
    'redis_connection'``). As passing as the move that caused it: a new client, or the same
    one a moment later, finds the new topology."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and frames[-1].filename.endswith(("redis/cluster.py", "redis\\cluster.py"))


class OutageLog:
    """Logs the start of an outage once and its end once."""

    def __init__(self, what: str, logger: Any = None) -> None:
        self.what = what
        self.log = logger or log
        self.since: float | None = None

    def failed(self, error: BaseException) -> None:
        if self.since is None:
            self.since = time.monotonic()
            self.log.warning(
                f"{self.what}: failing, retrying with backoff",
                error=f"{type(error).__name__}: {str(error)[:300]}",
            )

    def recovered(self) -> None:
        if self.since is not None:
            self.log.info(
                f"{self.what}: recovered", after_s=round(time.monotonic() - self.since, 2)
            )
            self.since = None


def backoff(settings: RetrySettings | None = None) -> tenacity.wait.wait_base:
    """Exponential from ``initial_s``, capped at ``max_s``, with full jitter."""
    settings = settings or RetrySettings()
    return tenacity.wait_random_exponential(multiplier=settings.initial_s, max=settings.max_s)


class Retry:
    """Call a function until it succeeds, waiting out failures with ``backoff``.

    ``retry_on`` picks which errors are waited out (default: outages only; others raise at
    once); ``stopping`` ends the waiting early (the error is raised then), as does
    ``deadline_s``. One ``OutageLog`` per instance: a loop that keeps one ``Retry`` logs an
    outage once however many calls it spans.
    """

    def __init__(
        self,
        what: str,
        *,
        logger: Any = None,
        retry_on: Callable[[BaseException], bool] = is_outage,
        stopping: threading.Event | None = None,
        deadline_s: float | None = None,
        settings: RetrySettings | None = None,
    ) -> None:
        self.outage = OutageLog(what, logger)
        self.retry_on = retry_on
        self.stopping = stopping
        self.deadline_s = deadline_s
        self.wait = backoff(settings)

    def _stop(self, state: tenacity.RetryCallState) -> bool:
        if self.stopping is not None and self.stopping.is_set():
            return True
        return self.deadline_s is not None and (state.seconds_since_start or 0) >= self.deadline_s

    def _sleep(self, seconds: float) -> None:
        if self.stopping is not None:
            self.stopping.wait(seconds)
        else:
            time.sleep(seconds)  # the backoff itself: nothing to wake us earlier

    def _note(self, state: tenacity.RetryCallState) -> None:
        if state.outcome is not None and state.outcome.failed:
            error = state.outcome.exception()
            if error is not None:
                self.outage.failed(error)

    def __call__(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(self.retry_on),
            wait=self.wait,
            stop=self._stop,
            sleep=self._sleep,
            before_sleep=self._note,
            reraise=True,
        )
        result = retrying(fn, *args, **kwargs)
        self.outage.recovered()
        return result


def always(error: BaseException) -> bool:
    """``retry_on`` for a loop that must survive any error (logged once, then backed off)."""
    del error
    return True


async def run_forever(
    cycle: Callable[[], Awaitable[None]],
    outage: OutageLog,
    *,
    on_failure: Callable[[BaseException], None] | None = None,
    settings: RetrySettings | None = None,
) -> None:
    """Await ``cycle`` again and again until cancelled: the asyncio loops' one policy.

    Any failure but a cancel is logged once per outage, handed to ``on_failure`` and waited
    out with ``backoff``; a cycle that returns ends the outage.
    """

    def failed(state: tenacity.RetryCallState) -> None:
        if state.outcome is not None and (error := state.outcome.exception()) is not None:
            outage.failed(error)
            if on_failure is not None:
                on_failure(error)

    retrying = tenacity.AsyncRetrying(
        retry=tenacity.retry_if_exception(lambda e: not isinstance(e, asyncio.CancelledError)),
        wait=backoff(settings),
        before_sleep=failed,
    )
    while True:
        async for attempt in retrying:
            with attempt:
                await cycle()
                outage.recovered()
