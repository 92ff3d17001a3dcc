"""Wake long-polls when a job changes: one LISTEN connection on ``jetspark_job_changed``.

Orchestration NOTIFYs inside every transition's transaction, so a waiter wakes exactly when
the change commits; no polling. The same notifications keep the status-read cache honest.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import uuid
from collections import OrderedDict, defaultdict
from dataclasses import dataclass

import psycopg
import structlog

from jetspark.jobs.orchestration import CHANNEL
from jetspark.retry import OutageLog, run_forever

log = structlog.get_logger("jetspark.api.notifications")


@dataclass(frozen=True, slots=True)
class CachedView:
    body: bytes
    """The job view as JSON, ready to send."""
    version: int
    stored_at: float
    owner: str
    """The job's principal: who may be served this view."""


@dataclass(frozen=True)
class InFlightRead:
    """A read of one job's view from PostgreSQL, which later readers of the job may join."""

    task: asyncio.Task[CachedView]
    epoch: int
    announced: int
    """The newest version announced when the read began: once it moves, the read is old."""


class JobViewCache:
    """Job views kept in memory, dropped when PostgreSQL says the job changed.

    Sound because a job's view changes only together with its ``version``, and every version
    bump NOTIFYs (``orchestration._record``) with the new version in the payload. A reader
    stores what it read only if no newer version was announced meanwhile, and only if the
    listener did not reconnect in between (NOTIFYs sent while it was away are lost, so a
    reconnect empties the cache). ``max_age_s`` bounds staleness should a writer ever change a
    view without a NOTIFY (0 turns the cache off). Used only while the listener is connected.

    Across API processes: a change made through another process (or a worker) is seen once
    its NOTIFY arrived, milliseconds after its commit; a read that names a newer version in
    ``If-None-Match`` than the one cached is read afresh (``api.routers.jobs``), so a client
    that saw a version never gets an older one from another process.
    """

    def __init__(self, *, max_entries: int = 10_000, max_age_s: float = 1.0) -> None:
        self.max_entries = max_entries
        self.max_age_s = max_age_s
        self.entries: OrderedDict[uuid.UUID, CachedView] = OrderedDict()
        self.announced: OrderedDict[uuid.UUID, int] = OrderedDict()
        """The newest version NOTIFYed per job (recent jobs only)."""
        self.epoch = 0
        """Bumped by every (re)connect of the listener."""
        self.enabled = False
        # The event loop reads and fills it; sync routes (threadpool) report their own writes.
        self.lock = threading.Lock()
        self.reads: dict[uuid.UUID, InFlightRead] = {}
        """Reads in flight per job (event loop only): when a view expires, the requests that
        arrive meanwhile share one database read instead of queueing for pool connections."""

    def announced_version(self, job_id: uuid.UUID) -> int:
        with self.lock:
            return self.announced.get(job_id, 0)

    def get(self, job_id: uuid.UUID) -> CachedView | None:
        if self.max_age_s <= 0:
            return None
        with self.lock:
            entry = self.entries.get(job_id) if self.enabled else None
        if entry is None or time.monotonic() - entry.stored_at > self.max_age_s:
            return None
        return entry

    def put(self, job_id: uuid.UUID, body: bytes, version: int, epoch: int, owner: str) -> None:
        """Keep a view read from PostgreSQL; ``epoch`` is ``self.epoch`` from before the read."""
        with self.lock:
            if not self.enabled or epoch != self.epoch or self.max_age_s <= 0:
                return
            if version < self.announced.get(job_id, 0):
                return  # a change committed while we were reading: what we read is old
            self.entries[job_id] = CachedView(body, version, time.monotonic(), owner)
            self.entries.move_to_end(job_id)
            while len(self.entries) > self.max_entries:
                self.entries.popitem(last=False)

    def changed(self, job_id: uuid.UUID, version: int) -> None:
        """Job ``job_id`` is now at ``version`` (from a NOTIFY, or this process's own write)."""
        with self.lock:
            if version > self.announced.get(job_id, 0):
                self.announced[job_id] = version
                self.announced.move_to_end(job_id)
                while len(self.announced) > 10 * self.max_entries:
                    self.announced.popitem(last=False)
            entry = self.entries.get(job_id)
            if entry is not None and entry.version < version:
                del self.entries[job_id]

    def reset(self, *, enabled: bool) -> None:
        with self.lock:
            self.entries.clear()
            self.epoch += 1
            self.enabled = enabled


class JobChangeListener:
    def __init__(self, dsn: str, *, cache_max_age_s: float = 1.0) -> None:
        self.dsn = dsn
        self.cache = JobViewCache(max_age_s=cache_max_age_s)
        self.waiters: dict[uuid.UUID | None, set[asyncio.Event]] = defaultdict(set)
        self.task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()
        self.outage = OutageLog("job change listener", log)

    async def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name="job-change-listener")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ready.wait(), timeout=10)

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task

    async def _run(self) -> None:
        try:
            await run_forever(self._listen, self.outage, on_failure=self._lost)
        finally:
            self.cache.reset(enabled=False)

    async def _listen(self) -> None:
        """One LISTEN connection, until it fails."""
        async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as conn:
            await conn.execute(f"LISTEN {CHANNEL}")
            self.cache.reset(enabled=True)
            self.ready.set()
            self.outage.recovered()
            self._wake_all()  # changes while we were away: let waiters re-read
            async for note in conn.notifies():
                self._wake(note.payload)

    def _lost(self, error: BaseException) -> None:
        """NOTIFYs sent while the listener is away are lost: serve no cached view then."""
        del error
        self.cache.reset(enabled=False)
        self.ready.clear()

    def _wake(self, payload: str) -> None:
        """``payload`` is ``<job id>:<version>:<status>``."""
        job_id, _, rest = payload.partition(":")
        try:
            key = uuid.UUID(job_id)
            version = int(rest.partition(":")[0])
        except ValueError:
            return
        self.cache.changed(key, version)  # before waking, so woken waiters read afresh
        for event in (*self.waiters.get(key, ()), *self.waiters.get(None, ())):
            event.set()

    def _wake_all(self) -> None:
        for events in self.waiters.values():
            for event in events:
                event.set()

    def waiter(self, job_id: uuid.UUID | None) -> asyncio.Event:
        """Register before re-reading the job, so no change slips between read and wait.

        ``None`` wakes on a change of any job.
        """
        event = asyncio.Event()
        self.waiters[job_id].add(event)
        return event

    def forget(self, job_id: uuid.UUID | None, event: asyncio.Event) -> None:
        events = self.waiters.get(job_id)
        if events is not None:
            events.discard(event)
            if not events:
                del self.waiters[job_id]
