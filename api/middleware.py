"""Pure ASGI middleware: body size limit (413) and a per-token rate limit (429)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.problems import PROBLEM_MEDIA_TYPE, TYPE_BASE


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
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class RateLimit:
    """A token bucket per bearer token (or client address); off when ``per_s`` is 0."""

    def __init__(self, app: ASGIApp, *, per_s: float, burst: int) -> None:
        self.app = app
        self.per_s = per_s
        self.burst = float(burst)
        self.buckets: dict[bytes, tuple[float, float]] = {}
        self.lock = threading.Lock()

    def _allow(self, who: bytes) -> bool:
        now = time.monotonic()
        with self.lock:
            tokens, last = self.buckets.get(who, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.per_s)
            allowed = tokens >= 1.0
            self.buckets[who] = (tokens - 1.0 if allowed else tokens, now)
            return allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.per_s <= 0:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        client = scope.get("client") or ("-", 0)
        who = headers.get(b"authorization") or str(client[0]).encode()
        if self._allow(who):
            await self.app(scope, receive, send)
            return
        retry = str(max(1, int(1 / self.per_s))).encode()
        await send_problem(
            send,
            scope,
            429,
            "Too Many Requests",
            f"more than {self.per_s:g} requests per second",
            [(b"retry-after", retry)],
        )
