"""/v1/jobs: submit, list, read (ETag, long-poll), act on, page through results, delete."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import uuid
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.routing import APIRoute
from sqlalchemy.orm import Session, sessionmaker

from api.auth import authenticated
from api.deps import (
    ApiSettingsDep,
    JdbcConnectionsDep,
    KafkaClustersDep,
    KeysDep,
    LimitsDep,
    PrincipalDep,
    RedisDep,
    SessionDep,
    TenantSettingsDep,
    ViewCacheDep,
    WebhookSettingsDep,
    WebhookTargetsDep,
)
from api.notifications import CachedView, InFlightRead, JobViewCache
from api.problems import CONFLICT, PROBLEM_RESPONSES
from api.schemas import JobPage, JobView, ResultPage
from api.storable import NO_NUL
from jetspark.dag.model import JobSpec
from jetspark.jobs import deletion, service
from jetspark.jobs.announcing import announce_job
from jetspark.jobs.orchestration import JobNotFound
from jetspark.jobs.status import JobStatus
from jetspark.tenants.principals import Principal

router = APIRouter(prefix="/v1", tags=["jobs"], responses=PROBLEM_RESPONSES)


def _etag(version: int) -> str:
    return f'"{version}"'


def _known_version(if_none_match: str | None) -> int:
    """The newest job version a client names in ``If-None-Match`` (0 for none): it has seen
    that version, so it must never be answered with an older one."""
    found = 0
    for tag in (if_none_match or "").split(","):
        digits = tag.strip().removeprefix("W/").strip('"')
        if digits.isdigit() and len(digits) <= 18:
            found = max(found, int(digits))
    return found


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    return any(tag.strip() in {etag, "*", f"W/{etag}"} for tag in if_none_match.split(","))


@router.post(
    "/jobs",
    status_code=201,
    operation_id="jobs-submit",
    response_model=JobView,
    responses={
        200: {"model": JobView, "description": "An Idempotency-Key replay: the same job"},
        **CONFLICT,
    },
)
def submit_job(
    spec: JobSpec,
    response: Response,
    session: SessionDep,
    client: RedisDep,
    keys: KeysDep,
    limits: LimitsDep,
    principal: PrincipalDep,
    tenants: TenantSettingsDep,
    webhooks: WebhookSettingsDep,
    targets: WebhookTargetsDep,
    connections: JdbcConnectionsDep,
    clusters: KafkaClustersDep,
    idempotency_key: Annotated[str | None, Header(max_length=256)] = None,
) -> JobView:
    """Validate and queue a DAG. The same Idempotency-Key and body return the same job
    (keys are per principal). 429 when the principal has its quota of queued jobs; 422
    naming each ``config.notify`` URL the server's webhook rules refuse."""
    submitted = service.submit_job(
        session,
        spec=spec,
        limits=limits,
        principal=principal,
        idempotency_key=idempotency_key,
        max_queued=tenants.quota_queued_jobs,
        webhooks=webhooks,
        targets=targets,
        namespace=keys.namespace,
        connections=connections,
        clusters=clusters,
    )
    job = submitted.job
    if submitted.created:
        announce_job(client, keys, job.id)
    else:
        response.status_code = 200
    response.headers["Location"] = f"/v1/jobs/{job.id}"
    response.headers["ETag"] = _etag(job.version)
    return JobView.of(job)


@router.get("/jobs", operation_id="jobs-list", response_model=JobPage)
def list_jobs(
    session: SessionDep,
    principal: PrincipalDep,
    status: Annotated[list[JobStatus] | None, Query()] = None,
    name: Annotated[str | None, Query(max_length=256, pattern=NO_NUL)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> JobPage:
    """The principal's jobs (an admin's: everyone's), newest first, filtered by status
    (repeatable) and name, a page at a time."""
    jobs, next_cursor = service.list_jobs(
        session, principal=principal, statuses=status, name=name, limit=limit, cursor=cursor
    )
    return JobPage(items=[JobView.of(j) for j in jobs], next_cursor=next_cursor)


def _read_view(sessions: sessionmaker[Session], job_id: uuid.UUID) -> tuple[JobView, str]:
    with sessions() as session:
        job = service.get_job(session, job_id)
        return JobView.of(job), job.principal


async def _load(request: Request, job_id: uuid.UUID, epoch: int) -> CachedView:
    cache: JobViewCache = request.app.state.listener.cache
    view, owner = await run_in_threadpool(_read_view, request.app.state.sessions, job_id)
    body = view.model_dump_json().encode()
    cache.put(job_id, body, view.version, epoch, owner)
    return CachedView(body, view.version, 0.0, owner)


def _done(cache: JobViewCache, job_id: uuid.UUID, read: InFlightRead, _: object) -> None:
    if cache.reads.get(job_id) is read:
        del cache.reads[job_id]
    if not read.task.cancelled():
        read.task.exception()  # retrieved: its awaiters raise it (a 404, say)


async def _owned(
    request: Request, job_id: uuid.UUID, principal: Principal, *, at_least: int = 0
) -> CachedView:
    """The job's view if ``principal`` owns it; another's job is not found (404)."""
    view = await _current(request, job_id, at_least=at_least)
    if not principal.owns(view.owner):
        raise JobNotFound(job_id)
    return view


async def _current(
    request: Request, job_id: uuid.UUID, *, cached: bool = True, at_least: int = 0
) -> CachedView:
    """The job's view as JSON: from the NOTIFY-invalidated cache, else from PostgreSQL.

    Status reads are the hot path (clients poll); a cache hit costs no threadpool hop and no
    database round trip, and serves bytes serialized once per version. ``cached=False``
    (the long-poll's re-reads) always reads afresh, as does a cached view older than
    ``at_least`` (a version the client has seen, made through another API process whose
    NOTIFY has not arrived yet).
    """
    cache: JobViewCache = request.app.state.listener.cache
    if not cached:
        return await _load(request, job_id, cache.epoch)
    hit = cache.get(job_id)
    if hit is not None and hit.version >= at_least:
        return hit
    if hit is not None:
        return await _load(request, job_id, cache.epoch)
    epoch, announced = cache.epoch, cache.announced_version(job_id)
    read = cache.reads.get(job_id)
    if read is None or (read.epoch, read.announced) != (epoch, announced):
        # A task, not this request's coroutine: a client hanging up must not fail the others.
        task = asyncio.create_task(_load(request, job_id, epoch))
        read = InFlightRead(task, epoch, announced)
        cache.reads[job_id] = read
        task.add_done_callback(functools.partial(_done, cache, job_id, read))
    shared = await asyncio.shield(read.task)
    if shared.version < at_least:  # that read began before the version the client saw
        return await _load(request, job_id, cache.epoch)
    return shared


def _view_response(view: CachedView, if_none_match: str | None) -> Response:
    etag = _etag(view.version)
    if _matches(if_none_match, etag):
        return Response(status_code=304, headers={"ETag": etag})
    return Response(view.body, media_type="application/json", headers={"ETag": etag})


def _cached_answer(request: Request) -> Response | None:
    """The answer to ``GET /v1/jobs/{id}`` when it is a plain read of a view in the cache by
    its owner, made without FastAPI solving the route's parameters and dependencies (that
    cost more than the rest of the request). None for anything else (a long-poll, a miss,
    another's job, a bad token, a malformed id or header): the route answers it in full."""
    if request.scope.get("query_string") or request.method != "GET":
        return None
    try:
        job_id = uuid.UUID(request.path_params["job_id"])
    except (KeyError, ValueError):
        return None
    cache: JobViewCache = request.app.state.listener.cache
    view = cache.get(job_id)
    if_none_match = request.headers.get("if-none-match")
    if view is None or (if_none_match is not None and len(if_none_match) > 256):
        return None
    if view.version < _known_version(if_none_match):
        return None  # the client has seen a newer version: the route reads afresh
    principal = authenticated(request)
    if principal is None or not principal.owns(view.owner):
        return None
    return _view_response(view, if_none_match)


class JobViewRoute(APIRoute):
    """``GET /v1/jobs/{id}``: clients poll it, so a cached view is answered first
    (``_cached_answer``); the route itself, as declared, answers everything else."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        full = super().get_route_handler()

        async def handler(request: Request) -> Response:
            answer = _cached_answer(request)
            return answer if answer is not None else await full(request)

        return handler


async def get_job(
    request: Request,
    job_id: uuid.UUID,
    principal: PrincipalDep,
    api_settings: ApiSettingsDep,
    wait_s: Annotated[float, Query(ge=0, le=3600)] = 0,
    if_none_match: Annotated[str | None, Header(max_length=256)] = None,
) -> Response:
    """A job. With ``If-None-Match`` and ``wait_s``, waits until the job changes (long-poll)."""
    view = await _owned(request, job_id, principal, at_least=_known_version(if_none_match))
    wait = min(wait_s, api_settings.long_poll_max_s)
    if wait > 0 and _matches(if_none_match, _etag(view.version)):
        listener = request.app.state.listener
        event = listener.waiter(job_id)
        try:
            view = await _current(request, job_id, cached=False)
            if _matches(if_none_match, _etag(view.version)):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), timeout=wait)
                view = await _current(request, job_id, cached=False)
        finally:
            listener.forget(job_id, event)
    return _view_response(view, if_none_match)


views = APIRouter(prefix="/v1", tags=["jobs"], responses=PROBLEM_RESPONSES)
"""The job view alone: routed before every other router (clients poll it)."""
views.add_api_route(
    "/jobs/{job_id}",
    get_job,
    methods=["GET"],
    operation_id="jobs-get",
    response_model=JobView,
    responses={304: {"description": "Not modified"}},
    route_class_override=JobViewRoute,
)


IdempotencyKey = Annotated[str | None, Header(max_length=256, pattern=NO_NUL)]
"""A retried lifecycle POST with the same key acts once and answers with the job."""


def _act(
    action: str,
    job_id: uuid.UUID,
    session: Session,
    cache: JobViewCache,
    principal: Principal,
    idempotency_key: str | None,
) -> tuple[JobView, bool]:
    acted = service.act(
        session,
        job_id=job_id,
        action=action,
        principal=principal,
        idempotency_key=idempotency_key,
    )
    view = JobView.of(acted.job)
    # Committed: drop our cached view now, so this client's next read sees its own write
    # even before PostgreSQL's NOTIFY comes back to the listener.
    cache.changed(job_id, view.version)
    return view, acted.acted


@router.post(
    "/jobs/{job_id}/cancel",
    operation_id="jobs-cancel",
    response_model=JobView,
    responses=CONFLICT,
)
def cancel_job(
    job_id: uuid.UUID,
    session: SessionDep,
    cache: ViewCacheDep,
    principal: PrincipalDep,
    idempotency_key: IdempotencyKey = None,
) -> JobView:
    """Cancel a job; a running one stops within a heartbeat. A cancelled job is answered as
    it is (200); 409 if it ended otherwise."""
    return _act("cancel", job_id, session, cache, principal, idempotency_key)[0]


@router.post(
    "/jobs/{job_id}/suspend",
    operation_id="jobs-suspend",
    response_model=JobView,
    responses=CONFLICT,
)
def suspend_job(
    job_id: uuid.UUID,
    session: SessionDep,
    cache: ViewCacheDep,
    principal: PrincipalDep,
    idempotency_key: IdempotencyKey = None,
) -> JobView:
    """Suspend a queued or running job."""
    return _act("suspend", job_id, session, cache, principal, idempotency_key)[0]


@router.post(
    "/jobs/{job_id}/resume",
    operation_id="jobs-resume",
    response_model=JobView,
    responses=CONFLICT,
)
def resume_job(
    job_id: uuid.UUID,
    session: SessionDep,
    client: RedisDep,
    keys: KeysDep,
    cache: ViewCacheDep,
    principal: PrincipalDep,
    idempotency_key: IdempotencyKey = None,
) -> JobView:
    """Queue a suspended job again."""
    view, acted = _act("resume", job_id, session, cache, principal, idempotency_key)
    if acted:
        announce_job(client, keys, job_id)
    return view


@router.post(
    "/jobs/{job_id}/restart",
    operation_id="jobs-restart",
    response_model=JobView,
    responses=CONFLICT,
)
def restart_job(
    job_id: uuid.UUID,
    session: SessionDep,
    client: RedisDep,
    keys: KeysDep,
    cache: ViewCacheDep,
    principal: PrincipalDep,
    idempotency_key: IdempotencyKey = None,
) -> JobView:
    """Stop a running job and queue it again as a new attempt."""
    view, acted = _act("restart", job_id, session, cache, principal, idempotency_key)
    if acted:
        announce_job(client, keys, job_id)
    return view


@router.delete(
    "/jobs/{job_id}",
    operation_id="jobs-delete",
    status_code=204,
    response_class=Response,
    responses={204: {"description": "Deleted"}, **CONFLICT},
)
def delete_job(
    job_id: uuid.UUID,
    session: SessionDep,
    client: RedisDep,
    keys: KeysDep,
    cache: ViewCacheDep,
    principal: PrincipalDep,
) -> Response:
    """Delete a finished job (COMPLETED, FAILED, CANCELLED) now, as retention would later: its
    history, results, metrics, logs, events and unnamed snapshots; its named snapshots stay
    until deleted. 409 for a job that has not finished."""
    job = deletion.delete_job(session, client, keys, job_id, principal)
    cache.changed(job_id, job.version + 1)  # this process's reads see it gone at once
    return Response(status_code=204)


@router.get("/jobs/{job_id}/results", operation_id="jobs-results", response_model=ResultPage)
def job_results(
    job_id: uuid.UUID,
    session: SessionDep,
    api_settings: ApiSettingsDep,
    principal: PrincipalDep,
    limit: Annotated[int, Query(ge=1, le=100_000)] = 100,
    # At most 18 ASCII digits: every cursor fits PostgreSQL's bigint (a longer one was a 500).
    cursor: Annotated[str | None, Query(max_length=18, pattern=r"^[0-9]{1,18}$")] = None,
) -> ResultPage:
    """The records a ``sink.results`` vertex kept, in order, a page at a time."""
    items, last = service.list_results(
        session,
        job_id=job_id,
        principal=principal,
        limit=min(limit, api_settings.results_page_max),
        after=int(cursor) if cursor else None,
    )
    return ResultPage(items=items, next_cursor=str(last) if last is not None else None)
