"""The webhook deliverer of an API process: claims due outbox rows and POSTs them.

Woken by the job-change NOTIFY the API already LISTENs to (an outbox row is written in the
transaction of a status change, which NOTIFYs), so a delivery leaves as soon as its change
commits; otherwise it looks every ``poll_s`` and when the next retry falls due. Several API
processes may run one each: rows are claimed with ``SKIP LOCKED`` under a lease.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime, timedelta

import structlog
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool

from api.notifications import JobChangeListener
from jetspark.retry import OutageLog, run_forever
from jetspark.settings import WebhookSettings
from jetspark.webhooks import delivery_queue
from jetspark.webhooks.delivery import Outcome, deliver, make_client
from jetspark.webhooks.delivery import backoff as retry_delay
from jetspark.webhooks.targets import TargetPolicy

log = structlog.get_logger("jetspark.webhooks")

MIN_WAIT_S = 0.05
"""Shortest nap when a due row is held by another process's claim."""


class Deliverer:
    """One asyncio task claiming deliveries, at most ``concurrency`` POSTs in flight."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        listener: JobChangeListener,
        settings: WebhookSettings,
        policy: TargetPolicy,
    ) -> None:
        self.sessions = sessions
        self.listener = listener
        self.settings = settings
        self.policy = policy
        self.lease = timedelta(seconds=settings.timeout_s + 30)
        self.in_flight: set[asyncio.Task[None]] = set()
        self.wake = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.outage = OutageLog("webhook deliverer", log)

    async def start(self) -> None:
        self.client = make_client(self.settings)
        self.task = asyncio.create_task(self._run(), name="webhook-deliverer")

    async def stop(self) -> None:
        """Stop claiming and drop POSTs in flight (their rows are retried after the lease)."""
        for task in (self.task, *self.in_flight):
            if task is not None:
                task.cancel()
        for task in (self.task, *self.in_flight):
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        await self.client.aclose()

    async def _run(self) -> None:
        await run_forever(self._cycle, self.outage)

    async def _cycle(self) -> None:
        """Claim what is due (as many as there are free slots), then wait for a reason to
        look again: a NOTIFY, a POST ending, the next retry falling due or ``poll_s``."""
        changed = self.listener.waiter(None)
        try:
            free = self.settings.concurrency - len(self.in_flight)
            claimed: list[delivery_queue.Claimed] = []
            if free > 0:
                claimed = await run_in_threadpool(self._claim, free)
                for row in claimed:
                    task = asyncio.create_task(self._deliver(row), name=f"webhook-{row.id}")
                    self.in_flight.add(task)
                    task.add_done_callback(self._done)
            if free > 0 and len(claimed) == free:
                return  # there may be more due: claim again as slots free up
            timeout = self.settings.poll_s
            if free > 0:
                due_in = await run_in_threadpool(self._next_due_in)
                if due_in is not None:
                    timeout = min(timeout, max(due_in, MIN_WAIT_S))
            self.wake.clear()
            waits = [asyncio.ensure_future(changed.wait()), asyncio.ensure_future(self.wake.wait())]
            try:
                await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in waits:
                    waiting.cancel()
        finally:
            self.listener.forget(None, changed)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.in_flight.discard(task)
        self.wake.set()

    def _claim(self, limit: int) -> list[delivery_queue.Claimed]:
        with self.sessions() as session:
            return delivery_queue.claim_due(session, limit=limit, lease=self.lease)

    def _next_due_in(self) -> float | None:
        with self.sessions() as session:
            return delivery_queue.next_due_in(session)

    async def _deliver(self, row: delivery_queue.Claimed) -> None:
        outcome = await deliver(self.client, self.policy, self.settings, row)
        try:
            await run_in_threadpool(self._settle, row, outcome)
        except Exception as error:  # the lease runs out and the row is tried again
            log.warning("webhook outcome not recorded", delivery=str(row.id), error=str(error))

    def _settle(self, row: delivery_queue.Claimed, outcome: Outcome) -> None:
        state, retry_in, error = outcome.result, None, outcome.error
        if state == "failed":
            age = datetime.now(UTC) - row.created_at
            if row.attempts < self.settings.max_attempts and age.total_seconds() < (
                self.settings.max_age_s
            ):
                state, retry_in = "pending", retry_delay(self.settings, row.attempts)
            else:
                error = f"gave up after {row.attempts} attempt(s): {error}"
        if state != "delivered":
            log.info(
                "webhook not delivered",
                delivery=str(row.id),
                job_id=str(row.job_id),
                attempt=row.attempts,
                state=state,
                error=error,
            )
        with self.sessions() as session:
            delivery_queue.settle(
                session,
                row,
                state=state,
                retry_in=retry_in,
                status_code=outcome.status_code,
                error=error,
            )
