"""Pure ASGI middleware: body size limit (413) and a per-principal rate limit (429)."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.auth import bearer_token
from api.problems import PROBLEM_MEDIA_TYPE, TYPE_BASE
from jetspark.json_depth import text_depth
from jetspark.tenants.principals import PrincipalDirectory
from jetspark.tenants.rate_limit import SharedRateLimit


async def send_problem(
    send: Send,
    scope: Scope,
    status: int,
    title: str,
    detail: str,
    headers: list[Any] = (),  # type: ignore[assignment]
) -> None:
    body = json.dumps(
        {
            "type": TYPE_BASE + title.lower().replace(" ", "-"),
            "title": title,
            "status": status,
            "detail": detail,
            "instance": scope.get("path", "/"),
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _has_body(scope: Scope) -> bool:
    """Whether the request carries a body: a non-zero Content-Length or a chunked one."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            return value.strip() not in (b"0", b"")
        if name == b"transfer-encoding":
            return True
    return False


class BodySizeLimit:
    """413 when Content-Length says so, or as soon as a streamed body passes the limit; 422
    when the body nests JSON deeper than ``max_depth``.

    The body is read up to the limit before the app runs (1 MiB by default), then replayed,
    so a refusal never reaches the app half-way through parsing. A request without a body
    (most reads) passes straight through.
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int, max_depth: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _has_body(scope):
            await self.app(scope, receive, send)
            return
        detail = f"the request body is larger than {self.max_bytes} bytes"
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await send_problem(send, scope, 413, "Content Too Large", detail)
                return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await send_problem(send, scope, 413, "Content Too Large", detail)
                return
            if not message.get("more_body", False):
                break
        if text_depth(bytes(body)) > self.max_depth:
            deep = f"the request body nests deeper than {self.max_depth} levels"
            await send_problem(send, scope, 422, "Unprocessable Content", deep)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


UNLIMITED_PATHS = frozenset({"/healthz"})
"""Answered whoever asks, however often: a load balancer's health checks come from a few
addresses many times a second, and the answer costs nothing."""


class RateLimit:
    """The rate limit per authenticated principal (per client address for requests without
    a valid token), shared by every API process through Redis
    (``jetspark.tenants.rate_limit``). Installed only when a limit is set.

    Keyed on who the token authenticates as, not on the ``Authorization`` text: spelling
    "Bearer" eight ways is still one principal.
    """

    def __init__(
        self, app: ASGIApp, *, limiter: SharedRateLimit, principals: PrincipalDirectory
    ) -> None:
        self.app = app
        self.limiter = limiter
        self.principals = principals

    def _who(self, scope: Scope) -> str:
        authorization = None
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                authorization = value.decode("latin-1")
                break
        token = bearer_token(authorization)
        principal = self.principals.authenticate(token) if token else None
        if principal is not None:
            # The route's dependency reuses it instead of checking the token again.
            scope.setdefault("state", {})["principal"] = principal
            return "p:" + principal.name
        client = scope.get("client") or ("-", 0)
        return "a:" + str(client[0])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.limiter is None or scope["type"] != "http" or scope.get("path") in UNLIMITED_PATHS:
            await self.app(scope, receive, send)
            return
        decision = await self.limiter.allow(self._who(scope))
        if decision.allowed:
            await self.app(scope, receive, send)
            return
        await send_problem(
            send,
            scope,
            429,
            "Too Many Requests",
            f"more than {self.limiter.per_s:g} requests per second",
            [(b"retry-after", str(decision.retry_after_s).encode())],
        )
