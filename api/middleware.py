"""Pure ASGI middleware: body size limit (413) and a per-principal rate limit (429)."""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.auth import bearer_token
from api.problems import PROBLEM_MEDIA_TYPE, TYPE_BASE
from jetspark.json_depth import text_depth
from jetspark.settings import EngineBounds
from jetspark.tenants.principals import PrincipalDirectory


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


class BodySizeLimit:
    """413 when Content-Length says so, or as soon as a streamed body passes the limit.

    The body is read up to the limit before the app runs (1 MiB by default), then replayed,
    so a refusal never reaches the app half-way through parsing.
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
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
        limit = EngineBounds().json_depth
        if text_depth(bytes(body)) > limit:
            deep = f"the request body nests deeper than {limit} levels"
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


class RateLimit:
    """A token bucket per authenticated principal (per client address for requests without
    a valid token); off when ``per_s`` is 0.

    Keyed on who the token authenticates as, not on the ``Authorization`` text: spelling
    "Bearer" eight ways is still one principal. Buckets that have refilled are pruned, so
    memory stays bounded by the clients active within one refill time.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        per_s: float,
        burst: int,
        principals: PrincipalDirectory,
        max_buckets: int = 100_000,
    ) -> None:
        self.app = app
        self.per_s = per_s
        self.burst = float(max(1, burst))
        self.principals = principals
        self.max_buckets = max_buckets
        self.buckets: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()
        self._next_prune = 0.0

    def _allow(self, who: str) -> bool:
        now = time.monotonic()
        with self.lock:
            if now >= self._next_prune or len(self.buckets) >= self.max_buckets:
                self._prune(now)
            tokens, last = self.buckets.get(who, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.per_s)
            allowed = tokens >= 1.0
            self.buckets[who] = (tokens - 1.0 if allowed else tokens, now)
            return allowed

    def _prune(self, now: float) -> None:
        """Drop full buckets (a new one starts full: nothing is forgotten); when still too
        many, drop the oldest (the fullest) ones."""
        refill_s = self.burst / self.per_s
        self.buckets = {w: b for w, b in self.buckets.items() if now - b[1] < refill_s}
        if len(self.buckets) >= self.max_buckets:
            newest = sorted(self.buckets.items(), key=lambda item: item[1][1])
            self.buckets = dict(newest[len(newest) - self.max_buckets // 2 :])
        self._next_prune = now + min(refill_s, 10.0)

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
        if scope["type"] != "http" or self.per_s <= 0:
            await self.app(scope, receive, send)
            return
        if self._allow(self._who(scope)):
            await self.app(scope, receive, send)
            return
        retry = str(max(1, math.ceil(1 / self.per_s))).encode()
        await send_problem(
            send,
            scope,
            429,
            "Too Many Requests",
            f"more than {self.per_s:g} requests per second",
            [(b"retry-after", retry)],
        )
