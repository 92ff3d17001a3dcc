"""Wake long-polls when a job changes: one LISTEN connection on ``jetspark_job_changed``.

Orchestration NOTIFYs inside every transition's transaction, so a waiter wakes exactly when
the change commits; no polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import defaultdict

import psycopg

from jetspark.jobs.orchestration import CHANNEL


class JobChangeListener:
    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.waiters: dict[uuid.UUID | None, set[asyncio.Event]] = defaultdict(set)
        self.task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()

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
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    self.ready.set()
                    self._wake_all()  # changes while we were away: let waiters re-read
                    async for note in conn.notifies():
                        self._wake(note.payload.split(":", 1)[0])
            except asyncio.CancelledError:
                raise
            except Exception:
                self.ready.clear()
                await asyncio.sleep(1.0)  # reconnect backoff, not synchronisation

    def _wake(self, job_id: str) -> None:
        try:
            key = uuid.UUID(job_id)
        except ValueError:
            return
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
