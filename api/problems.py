"""RFC 9457 problem details: every error the API returns, mapped once in the app factory."""

from __future__ import annotations

import re
import uuid
from http import HTTPStatus
from typing import Any

import redis
import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import exc as sa_exc
from starlette.exceptions import HTTPException as StarletteHTTPException

from jetspark.dag.errors import DagValidationError
from jetspark.jobs.accept import UnstorableText
from jetspark.jobs.deletion import JobNotFinished, SnapshotNotFound
from jetspark.jobs.orchestration import IllegalTransition, JobNotFound
from jetspark.jobs.service import IdempotencyConflict, InvalidCursor, QuotaExceeded
from jetspark.jobs.snapshots import SnapshotConflict
from jetspark.retry import is_outage
from jetspark.settings import RetrySettings
from jetspark.webhooks.subscriptions import NotifyRefused

log = structlog.get_logger("jetspark.api")

PROBLEM_MEDIA_TYPE = "application/problem+json"
TYPE_BASE = "https://jetspark.dev/problems/"


class ProblemDetail(BaseModel):
    """The body of every error response."""

    type: str
    title: str
    status: int
    detail: str
    instance: str | None = None
    errors: list[dict[str, str]] | None = None
    """For invalid input: ``{pointer, message}`` per problem."""


class Problem(Exception):
    """Raise anywhere to answer with a problem+json response."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        slug: str | None = None,
        title: str | None = None,
        errors: list[dict[str, str]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.title = title or HTTPStatus(status).phrase
        self.slug = slug or self.title.lower().replace(" ", "-")
        self.errors = errors
        self.headers = headers


class Unavailable(Problem):
    """A dependency (PostgreSQL, Redis) is down: 503 with ``Retry-After``, never a 500."""

    def __init__(self, dependency: str, retry_after: int) -> None:
        super().__init__(
            503,
            f"{dependency} is unavailable; retry in {retry_after} s",
            slug="dependency-unavailable",
            title="Service Unavailable",
            headers={"Retry-After": str(retry_after)},
        )


def _dependency(error: BaseException) -> str:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, redis.RedisError):
            return "Redis"
        seen = seen.__cause__ or seen.__context__
    return "PostgreSQL"


class ProblemResponse(JSONResponse):
    media_type = PROBLEM_MEDIA_TYPE


def problem_response(request: Request, problem: Problem) -> ProblemResponse:
    body = ProblemDetail(
        type=TYPE_BASE + problem.slug,
        title=problem.title,
        status=problem.status,
        detail=problem.detail,
        instance=request.url.path,
        errors=problem.errors,
    )
    return ProblemResponse(
        body.model_dump(exclude_none=True), status_code=problem.status, headers=problem.headers
    )


def _pointer(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in {"body", "query", "path", "header"}:
        where, rest = parts[0], parts[1:]
        return ("/" + "/".join(rest)) if where == "body" else f"{where}:/" + "/".join(rest)
    return "/" + "/".join(parts)


PLAIN: dict[type[Exception], tuple[int, str, str]] = {
    JobNotFound: (404, "job-not-found", "Job not found"),
    IllegalTransition: (409, "illegal-transition", "Illegal transition"),
    JobNotFinished: (409, "job-not-finished", "Job not finished"),
    SnapshotNotFound: (404, "snapshot-not-found", "Snapshot not found"),
    IdempotencyConflict: (422, "idempotency-key-reused", "Key reused"),
    SnapshotConflict: (409, "snapshot-conflict", "Snapshot conflict"),
    InvalidCursor: (422, "invalid-cursor", "Invalid cursor"),
}
"""Errors answered with their message as the detail: status, slug, title."""


def _as_problem(error: Exception) -> Problem:
    if isinstance(error, Problem):
        return error
    if isinstance(error, UnstorableText):
        errors = [{"pointer": p.pointer, "message": p.message} for p in error.problems]
        return Problem(
            422,
            f"{errors[0]['pointer']}: {errors[0]['message']}",
            slug="invalid-request",
            title="Invalid request",
            errors=errors,
        )
    if isinstance(error, DagValidationError):
        return Problem(
            422,
            f"the DAG has {len(error.problems)} problem(s): {error.problems[0].message}",
            slug="invalid-dag",
            title="Invalid DAG",
            errors=[{"pointer": p.pointer, "message": p.message} for p in error.problems],
        )
    if isinstance(error, RequestValidationError):
        errors = [
            {"pointer": _pointer(tuple(e["loc"])), "message": str(e["msg"])} for e in error.errors()
        ]
        first = errors[0] if errors else {"pointer": "/", "message": "invalid request"}
        return Problem(
            422,
            f"{first['pointer']}: {first['message']}",
            slug="invalid-request",
            title="Invalid request",
            errors=errors,
        )
    if isinstance(error, NotifyRefused):
        return Problem(
            422,
            f"{len(error.problems)} webhook URL(s) refused: {error.problems[0][1]}",
            slug="webhook-refused",
            title="Webhook refused",
            errors=[{"pointer": at, "message": message} for at, message in error.problems],
        )
    for kind, (status, slug, title) in PLAIN.items():
        if isinstance(error, kind):
            return Problem(status, str(error), slug=slug, title=title)
    if isinstance(error, QuotaExceeded):
        return Problem(
            429,
            str(error),
            slug="quota-exceeded",
            title="Quota exceeded",
            headers={"Retry-After": str(error.retry_after_s)},
        )
    if isinstance(error, StarletteHTTPException) and error.status_code == 400:
        # FastAPI's "error parsing the body" (e.g. bytes that are not UTF-8): malformed input,
        # answered like malformed JSON so clients see one status for one kind of mistake.
        return Problem(
            422,
            f"/: the body is not valid JSON ({error.detail})",
            slug="invalid-request",
            title="Invalid request",
            errors=[{"pointer": "/", "message": "the body is not valid JSON text"}],
        )
    if isinstance(error, StarletteHTTPException):
        return Problem(
            error.status_code,
            str(error.detail),
            headers=dict(error.headers) if error.headers else None,
        )
    return Problem(500, "internal error", slug="internal-error")


def _allowed_methods(request: Request) -> str | None:
    """Every documented method at this path, or None for an undocumented path.

    Starlette's 405 names only the methods of the first route whose path matched, so
    ``OPTIONS /v1/jobs`` said ``Allow: POST`` although ``GET /v1/jobs`` exists too.
    """
    table: list[tuple[re.Pattern[str], set[str]]] | None = getattr(
        request.app.state, "allowed_methods", None
    )
    if table is None:
        table = [
            (
                re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path)) + "$"),
                {method.upper() for method in operations},
            )
            for path, operations in request.app.openapi()["paths"].items()
        ]
        request.app.state.allowed_methods = table
    methods = {m for pattern, ms in table if pattern.match(request.url.path) for m in ms}
    return ", ".join(sorted(methods)) if methods else None


def install_problem_handlers(app: FastAPI) -> None:
    async def handle(request: Request, error: Exception) -> ProblemResponse:
        problem = _as_problem(error)
        allowed = _allowed_methods(request) if problem.status == 405 else None
        if allowed:
            problem.headers = {**(problem.headers or {}), "Allow": allowed}
        return problem_response(request, problem)

    def dependency_down(request: Request, error: Exception) -> ProblemResponse:
        settings: RetrySettings = request.app.state.retry_settings
        problem = Unavailable(_dependency(error), settings.api_retry_after_s)
        return problem_response(request, problem)

    async def unavailable(request: Request, error: Exception) -> ProblemResponse:
        if not is_outage(error):
            return await unexpected(request, error)
        return dependency_down(request, error)

    async def unexpected(request: Request, error: Exception) -> ProblemResponse:
        """The catch-all: a bug (to fix), answered as problem+json with an id to find the
        traceback by in the log; never a plain-text page."""
        if is_outage(error):
            return dependency_down(request, error)
        incident = uuid.uuid4().hex
        log.error(
            "unhandled error",
            error_id=incident,
            method=request.method,
            path=request.url.path,
            exc_info=(type(error), error, error.__traceback__),
        )
        body = ProblemDetail(
            type=TYPE_BASE + "internal-error",
            title="Internal Server Error",
            status=500,
            detail=f"internal error; quote id {incident} to the operator",
            instance=request.url.path,
        ).model_dump(exclude_none=True)
        return ProblemResponse({**body, "id": incident}, status_code=500)

    for outage in (
        sa_exc.OperationalError,
        sa_exc.InterfaceError,
        sa_exc.DBAPIError,
        redis.ConnectionError,
        redis.TimeoutError,
        redis.exceptions.ClusterDownError,  # a Redis Cluster failing over
        redis.exceptions.TryAgainError,
        redis.exceptions.MasterDownError,
        redis.exceptions.SlotNotCoveredError,
    ):
        app.add_exception_handler(outage, unavailable)
    app.add_exception_handler(Exception, unexpected)
    for kind in (
        Problem,
        DagValidationError,
        RequestValidationError,
        *PLAIN,
        QuotaExceeded,
        NotifyRefused,
        StarletteHTTPException,
    ):
        app.add_exception_handler(kind, handle)


def problem_response_doc(status: int) -> dict[str, Any]:
    """The OpenAPI ``responses`` entry of a problem+json answer with ``status``."""
    return {
        "model": ProblemDetail,
        "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/ProblemDetail"}}},
        "description": HTTPStatus(status).phrase,
    }


PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: problem_response_doc(status) for status in (401, 404, 413, 422, 429)
}
"""Documented on every route so clients know error bodies' shape."""

CONFLICT: dict[int | str, dict[str, Any]] = {409: problem_response_doc(409)}
"""Also on the routes that change a job's status: the move is not allowed from its status."""
