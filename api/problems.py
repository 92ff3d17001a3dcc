"""RFC 9457 problem details: every error the API returns, mapped once in the app factory."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from jetspark.dag.errors import DagValidationError
from jetspark.jobs.orchestration import IllegalTransition, JobNotFound
from jetspark.jobs.service import IdempotencyConflict, InvalidCursor

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


def _as_problem(error: Exception) -> Problem:
    if isinstance(error, Problem):
        return error
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
    if isinstance(error, JobNotFound):
        return Problem(404, str(error), slug="job-not-found", title="Job not found")
    if isinstance(error, IllegalTransition):
        return Problem(409, str(error), slug="illegal-transition", title="Illegal transition")
    if isinstance(error, IdempotencyConflict):
        return Problem(422, str(error), slug="idempotency-key-reused", title="Key reused")
    if isinstance(error, InvalidCursor):
        return Problem(422, str(error), slug="invalid-cursor", title="Invalid cursor")
    if isinstance(error, StarletteHTTPException):
        return Problem(
            error.status_code,
            str(error.detail),
            headers=dict(error.headers) if error.headers else None,
        )
    return Problem(500, "internal error", slug="internal-error")


def install_problem_handlers(app: FastAPI) -> None:
    async def handle(request: Request, error: Exception) -> ProblemResponse:
        return problem_response(request, _as_problem(error))

    for kind in (
        Problem,
        DagValidationError,
        RequestValidationError,
        JobNotFound,
        IllegalTransition,
        IdempotencyConflict,
        InvalidCursor,
        StarletteHTTPException,
    ):
        app.add_exception_handler(kind, handle)


PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {
        "model": ProblemDetail,
        "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/ProblemDetail"}}},
        "description": HTTPStatus(status).phrase,
    }
    for status in (401, 404, 413, 422, 429)
}
"""Documented on every route so clients know error bodies' shape."""
