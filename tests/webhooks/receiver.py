"""A real webhook receiver on loopback: records every POST and answers as told."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    delivery: str
    headers: dict[str, str]
    body: bytes
    answered: int
    at: float
    """``time.time()`` when the request was read."""


@dataclass
class Receiver:
    """``fail_first``: answer 500 to the first this-many requests of each delivery id;
    ``failing``: answer 500 to everything while set."""

    url: str
    fail_first: int = 0
    failing: bool = False
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    arrived: threading.Condition = field(init=False)

    def __post_init__(self) -> None:
        self.arrived = threading.Condition(self.lock)

    def answer(self, delivery: str) -> int:
        seen = sum(1 for r in self.received if r.delivery == delivery)
        return 500 if self.failing or seen < self.fail_first else 200

    def delivered(self) -> list[Received]:
        with self.lock:
            return [r for r in self.received if r.answered == 200]

    def wait_for(self, count: int, deadline_s: float = 30.0) -> list[Received]:
        """Wait until ``count`` requests were answered 200; they, in arrival order."""
        deadline = time.monotonic() + deadline_s
        with self.arrived:
            while sum(1 for r in self.received if r.answered == 200) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    answered = Counter(r.answered for r in self.received)
                    raise AssertionError(f"{count} deliveries expected; got {answered}")
                self.arrived.wait(left)
            return [r for r in self.received if r.answered == 200]


@contextmanager
def receiver(**options: object) -> Iterator[Receiver]:
    """A receiver serving on a free loopback port until the block ends."""
    box: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            got = box[0]
            delivery = self.headers.get("X-Jetspark-Delivery", "")
            with got.arrived:
                status = got.answer(delivery)
                got.received.append(
                    Received(delivery, dict(self.headers.items()), body, status, time.time())
                )
                got.arrived.notify_all()
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: object) -> None:
            del format, args

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    box.append(Receiver(f"http://127.0.0.1:{server.server_address[1]}/hook", **options))  # type: ignore[arg-type]
    thread = threading.Thread(target=server.serve_forever, name="webhook-receiver", daemon=True)
    thread.start()
    try:
        yield box[0]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
