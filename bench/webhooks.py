"""Webhook delivery latency: a status change's commit -> the receiver reads the POST.

Run: ``make bench-webhooks`` (``.venv/bin/python -m bench.webhooks [--jobs N]``).
PostgreSQL and Redis from ``JETSPARK_DATABASE_URL`` / ``JETSPARK_REDIS_URL`` (else the
embedded servers), a fresh database; the API (``api.app.create_app``, its deliverer woken by
NOTIFY) under uvicorn and a receiver on loopback, both in this process. Each job is submitted
(QUEUED) and then cancelled (CANCELLED), every change committed in this process: two
deliveries per job, each waited for before the next change. Latency is the receiver's clock
reading when it has read the request, minus this process's clock when ``commit`` returned.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import uvicorn
from sqlalchemy.orm import sessionmaker

from api.app import create_app
from bench.submit_latency import fresh_database, percentile, services
from jetspark.dag.model import JobSpec
from jetspark.db.engine import make_engine
from jetspark.jobs import service
from jetspark.settings import DagLimits, WebhookSettings
from jetspark.webhooks.targets import TargetPolicy

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "word-count.json"


class Arrivals:
    """Delivery ids and when they arrived, for the bench's thread to wait on."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}
        self.status: dict[str, str] = {}
        self.cond = threading.Condition()

    def add(self, body: bytes, at: float) -> None:
        document = json.loads(body)
        with self.cond:
            self.at[document["delivery_id"]] = at
            self.status[document["delivery_id"]] = document["job"]["status"]
            self.cond.notify_all()

    def wait_for(self, job_status: str, seen: int, deadline_s: float = 30.0) -> float:
        """The arrival time of the next delivery (``seen`` were before) announcing it."""
        deadline = time.monotonic() + deadline_s
        with self.cond:
            while len(self.at) <= seen:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no delivery of {job_status} within {deadline_s} s")
                self.cond.wait(left)
            newest = list(self.at)[seen]
            assert self.status[newest] == job_status, self.status[newest]
            return self.at[newest]


def receiver(arrivals: Arrivals) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            arrivals.add(body, time.time())
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            del format, args

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def serve(app: Any) -> uvicorn.Server:
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    )
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the API did not start")
        time.sleep(0.01)  # waiting for uvicorn's start flag, with a deadline
    return server


def run(jobs: int) -> dict[str, Any]:
    with ExitStack() as stack:
        home = stack.enter_context(tempfile.TemporaryDirectory(prefix="jetspark-bench-"))
        database, redis_url = stack.enter_context(services(Path(home)))
        url = fresh_database(database)
        arrivals = Arrivals()
        hook = receiver(arrivals)
        hook_url = f"http://127.0.0.1:{hook.server_address[1]}/hook"
        settings = WebhookSettings(secret="bench", allowed_hosts=["127.0.0.1/32"])
        app = create_app(database_url=url, redis_url=redis_url, webhook_settings=settings)
        api = serve(app)
        engine = make_engine(url, pool_size=2)
        sessions = sessionmaker(engine, expire_on_commit=False)
        body = json.loads(EXAMPLE.read_text())
        body.setdefault("config", {})["notify"] = [hook_url]
        targets = TargetPolicy(settings)
        latencies: list[float] = []
        try:
            for i in range(jobs):
                body["name"] = f"hooked-{i}"
                with sessions() as session:
                    job = service.submit_job(
                        session,
                        spec=JobSpec.model_validate(body),
                        limits=DagLimits(),
                        webhooks=settings,
                        targets=targets,
                    ).job
                    committed = time.time()  # submit_job commits before it returns
                latencies.append(arrivals.wait_for("QUEUED", len(latencies)) - committed)
                with sessions() as session:
                    service.request_transition(session, job_id=job.id, action="cancel")
                    committed = time.time()
                latencies.append(arrivals.wait_for("CANCELLED", len(latencies)) - committed)
        finally:
            api.should_exit = True
            hook.shutdown()
            engine.dispose()
        return {
            "deliveries": len(latencies),
            **{
                f"{name}_ms": round(percentile(latencies, q) * 1000, 2)
                for name, q in (("min", 0.0), ("p50", 0.5), ("p99", 0.99), ("max", 1.0))
            },
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=50, help="jobs (two deliveries each)")
    args = parser.parse_args()
    print(json.dumps(run(args.jobs)))


if __name__ == "__main__":
    main()
