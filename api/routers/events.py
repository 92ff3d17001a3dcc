"""Server-Sent Events, resumable: ``GET /v1/jobs/{id}/events`` and ``GET /v1/events``.

A job's stream merges two sources:
- ``status`` events are the job's ``job_transitions`` rows (PostgreSQL), woken by the
  ``LISTEN`` connection the long-poll uses;
- ``metrics`` and ``snapshot`` events come from the job's Redis Stream (``XREAD BLOCK``).

Every event's id carries both cursors, ``<transition id>.<stream id>``, so a client that
reconnects with ``Last-Event-ID`` gets exactly what it missed from each source: no gap, no
repeat. The stream ends with an ``end`` event once the job is terminal.

``/v1/events`` carries the ``status`` events of every job (one connection for a job list).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

import redis.asyncio as aioredis
import structlog
from fastapi import APIRouter, Header, Request
from fastapi.concurrency import run_in_threadpool
from sqlalchemy.orm import Session, sessionmaker
from sse_starlette import EventSourceResponse, ServerSentEvent

from api.deps import PrincipalDep
from api.notifications import JobChangeListener
from api.problems import PROBLEM_RESPONSES, Problem
from api.schemas import TransitionView
from jetspark.jobs import service
from jetspark.jobs.status import JobStatus
from jetspark.queue.events import EventKind
from jetspark.queue.keys import Keys
from jetspark.redis_client import AsyncRedisClient
from jetspark.tenants.principals import Principal
from jetspark.tenants.quotas import SharedConnectionSlots, Slot

router = APIRouter(prefix="/v1", tags=["jobs"], responses=PROBLEM_RESPONSES)

STREAM_BATCH = 200
LIVE_KINDS = frozenset(kind.value for kind in EventKind)
"""The kinds of events a job's Redis stream carries (``status`` and ``end`` come from
PostgreSQL only)."""
log = structlog.get_logger("jetspark.api")
PING_S = 10
_CURSOR = re.compile(r"^(\d{1,19})\.(\d{1,20}-\d{1,20})$")


LastEventId = Annotated[str | None, Header(max_length=64)]
"""The id of the last event a reconnecting client saw."""


def _stream_responses(description: str) -> dict[int | str, dict[str, Any]]:
    return {
        200: {
            "description": description,
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }
    }


@dataclass
class EventCursor:
    """Where a client is in both sources."""

    transition: int = 0
    stream: str = "0-0"

    def render(self) -> str:
        return f"{self.transition}.{self.stream}"

    @classmethod
    def parse(cls, text: str) -> EventCursor:
        match = _CURSOR.match(text.strip())
        if match is None:
            raise Problem(
                422,
                f"Last-Event-ID {text!r} is not an id this server sent",
                slug="invalid-event-id",
                title="Invalid event id",
            )
        return cls(int(match.group(1)), match.group(2))


def _history(
    sessions: sessionmaker[Session], job_id: uuid.UUID | None, principal: Principal, after: int
) -> tuple[list[TransitionView], bool]:
    """Transitions after ``after`` and whether the job has ended (never, for all jobs): of
    the principal's jobs only (an admin's: of all)."""
    with sessions() as session:
        ended = False
        if job_id is not None:
            ended = JobStatus(service.get_job(session, job_id, principal).status).is_terminal
        rows = service.list_transitions(session, job_id=job_id, principal=principal, after=after)
        return [TransitionView.of(r) for r in rows], ended


def _last_transition_id(sessions: sessionmaker[Session]) -> int:
    with sessions() as session:
        return service.last_transition_id(session)


def _ensure_exists(
    sessions: sessionmaker[Session], job_id: uuid.UUID, principal: Principal
) -> None:
    with sessions() as session:
        service.get_job(session, job_id, principal)  # raises JobNotFound: 404


async def _latest_stream_id(client: AsyncRedisClient, stream: str) -> str:
    try:
        newest: Any = await client.xrevrange(stream, count=1)
    except aioredis.ResponseError as error:  # not a stream: read as empty (and logged)
        log.warning("unreadable job event stream", key=stream, error=str(error)[:200])
        return "0-0"
    return str(newest[0][0]) if newest else "0-0"


class EventStream:
    """One client's view of one job (or of all jobs' statuses), from a cursor on."""

    def __init__(
        self,
        request: Request,
        job_id: uuid.UUID | None,
        cursor: EventCursor,
        principal: Principal,
    ) -> None:
        self.job_id = job_id
        self.principal = principal
        self.cursor = cursor
        self.sessions: sessionmaker[Session] = request.app.state.sessions
        self.listener: JobChangeListener = request.app.state.listener
        self.redis: AsyncRedisClient = request.app.state.aioredis
        keys: Keys = request.app.state.keys
        self.stream = keys.job_events(job_id) if job_id is not None else None

    async def events(self) -> AsyncIterator[ServerSentEvent]:
        while True:
            # Register before reading, so a change between the read and the wait wakes us.
            waiter = self.listener.waiter(self.job_id)
            try:
                transitions, ended = await run_in_threadpool(
                    _history, self.sessions, self.job_id, self.principal, self.cursor.transition
                )
                for view in transitions:
                    self.cursor.transition = view.id
                    yield self._event("status", view.model_dump_json())
                entries = await self._read_stream(block_ms=None)
                for event in entries:
                    yield event
                if ended and not transitions and not entries:
                    yield self._event("end", json.dumps({"job_id": str(self.job_id)}))
                    return
                if transitions or entries:
                    continue  # drain before waiting
                for event in await self._wait(waiter):
                    yield event
            finally:
                self.listener.forget(self.job_id, waiter)

    async def _wait(self, waiter: asyncio.Event) -> list[ServerSentEvent]:
        """Until the job changes in PostgreSQL or its stream grows (or a ping interval)."""
        reading = asyncio.create_task(self._read_stream(block_ms=PING_S * 1000))
        changed = asyncio.create_task(waiter.wait())
        try:
            done, _ = await asyncio.wait({reading, changed}, return_when="FIRST_COMPLETED")
        finally:
            # Also when the client went away and this generator is cancelled mid-wait.
            for task in (reading, changed):
                if not task.done():
                    task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        return reading.result() if reading in done else []

    async def _read_stream(self, *, block_ms: int | None) -> list[ServerSentEvent]:
        if self.stream is None:
            if block_ms:  # nothing to read: just wait out the ping interval
                await asyncio.sleep(block_ms / 1000)
            return []
        try:
            reply: Any = await self.redis.xread(
                {self.stream: self.cursor.stream}, count=STREAM_BATCH, block=block_ms
            )
        except aioredis.ResponseError as error:
            # The key is not a stream (planted, or a bug): the status events go on without it.
            log.warning("unreadable job event stream", key=self.stream, error=str(error)[:200])
            if block_ms:
                await asyncio.sleep(block_ms / 1000)  # what the blocking read would have waited
            return []
        except (aioredis.ConnectionError, aioredis.TimeoutError) as error:
            # Redis blinked: the status events (PostgreSQL) go on; the stream is read again
            # from the same cursor at the next turn, so nothing of it is lost.
            log.info("job event stream unreachable", key=self.stream, error=str(error)[:200])
            if block_ms:
                await asyncio.sleep(min(block_ms / 1000, 1.0))
            return []
        # RESP2 answers [[stream, entries]], RESP3 {stream: entries}.
        streams = reply.items() if isinstance(reply, dict) else (reply or [])
        found: list[ServerSentEvent] = []
        for _, entries in streams:
            for entry_id, fields in entries:
                self.cursor.stream = str(entry_id)
                kind, data = (fields or {}).get("kind"), (fields or {}).get("data")
                if kind not in LIVE_KINDS or not isinstance(data, str):
                    # Only the worker's metrics and snapshot events: a forged "status" or
                    # "end" event, or an entry without data, is skipped (the cursor passes it).
                    log.warning("job event skipped", key=self.stream, entry=str(entry_id))
                    continue
                found.append(self._event(kind, data))
        return found

    def _event(self, kind: str, data: str) -> ServerSentEvent:
        return ServerSentEvent(data=data, event=kind, id=self.cursor.render())


@router.get(
    "/jobs/{job_id}/events",
    operation_id="jobs-events",
    response_class=EventSourceResponse,
    responses=_stream_responses("Server-Sent Events: status, metrics, snapshot, end"),
)
async def job_events(
    request: Request,
    job_id: uuid.UUID,
    principal: PrincipalDep,
    last_event_id: LastEventId = None,
) -> EventSourceResponse:
    """Follow a job live. Reconnect with ``Last-Event-ID`` to resume where you left off.
    429 when the principal has its quota of open event streams."""
    cursor = EventCursor.parse(last_event_id) if last_event_id else None
    await run_in_threadpool(_ensure_exists, request.app.state.sessions, job_id, principal)
    if cursor is None:
        # A new client gets the whole status history, and live ticks from now on.
        keys: Keys = request.app.state.keys
        latest = await _latest_stream_id(request.app.state.aioredis, keys.job_events(job_id))
        cursor = EventCursor(0, latest)
    stream = EventStream(request, job_id, cursor, principal).events()
    return EventSourceResponse(await _counted(request, principal, stream), ping=PING_S)


@router.get(
    "/events",
    operation_id="jobs-events-all",
    response_class=EventSourceResponse,
    responses=_stream_responses("Server-Sent Events: the status changes of every job"),
)
async def all_job_events(
    request: Request,
    principal: PrincipalDep,
    last_event_id: LastEventId = None,
) -> EventSourceResponse:
    """The status changes of the principal's jobs (an admin's: every job's) from now on (or
    from ``Last-Event-ID``), for job lists. 429 past the principal's quota of streams."""
    if last_event_id:
        cursor = EventCursor.parse(last_event_id)
    else:
        newest = await run_in_threadpool(_last_transition_id, request.app.state.sessions)
        cursor = EventCursor(newest, "0-0")
    stream = EventStream(request, None, cursor, principal).events()
    return EventSourceResponse(await _counted(request, principal, stream), ping=PING_S)


async def _counted(
    request: Request, principal: Principal, events: AsyncIterator[ServerSentEvent]
) -> AsyncIterator[ServerSentEvent]:
    """Hold one of the principal's event-stream slots (counted by every API process) while
    ``events`` is being sent."""
    slots: SharedConnectionSlots = request.app.state.sse_slots
    slot = await slots.acquire(principal.name)
    if slot is None:
        raise Problem(
            429,
            f"principal {principal.name!r} has {slots.limit} event streams open, its quota "
            "(JETSPARK_QUOTA_SSE_CONNECTIONS)",
            slug="quota-exceeded",
            title="Quota exceeded",
            headers={"Retry-After": "5"},
        )
    return _releasing(slots, slot, events)


async def _releasing(
    slots: SharedConnectionSlots, slot: Slot, events: AsyncIterator[ServerSentEvent]
) -> AsyncIterator[ServerSentEvent]:
    try:
        async for event in events:
            yield event
    finally:
        slots.release(slot)
