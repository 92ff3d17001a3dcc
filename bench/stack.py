"""Start the whole ``jetspark up`` stack in a throw-away home for a benchmark, and measure it."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import psutil

from bench.processes import exit_on_sigterm, free_port, terminate, uvicorn_server, wait_ready
from jetspark.embedded.postgres import remove_data

APP_FACTORY = "api.app:create_app"


@dataclass(frozen=True)
class RunningStack:
    url: str
    token: str
    process: subprocess.Popen[bytes]
    home: Path
    start_s: float
    """Seconds from launching ``jetspark up`` to the first 200 from ``/readyz``."""

    def processes(self) -> list[psutil.Process]:
        """``jetspark up`` and its tree: API, workers and their JVMs, Valkey, PostgreSQL."""
        root = psutil.Process(self.process.pid)
        tree: list[psutil.Process] = [root, *root.children(recursive=True)]
        return tree

    def rss_bytes(self) -> int:
        """Resident memory of ``jetspark up`` and every process it started."""
        total = 0
        for proc in self.processes():
            try:
                total += proc.memory_info().rss
            except psutil.Error:
                continue
        return total

    def memory_by_part(self) -> dict[str, dict[str, float]]:
        """RSS and PSS (shared pages split between their users) in MiB, per part of the stack.

        RSS counts PostgreSQL's shared buffers once per backend; PSS does not, so its sum is
        the honest total.
        """
        parts: dict[str, dict[str, float]] = {}
        for proc in self.processes():
            try:
                name = _part(proc)
                memory = proc.memory_full_info()
            except psutil.Error:
                continue
            part = parts.setdefault(name, {"processes": 0, "rss_mib": 0.0, "pss_mib": 0.0})
            part["processes"] += 1
            part["rss_mib"] += memory.rss / 2**20
            part["pss_mib"] += getattr(memory, "pss", memory.rss) / 2**20
        return {
            name: {key: round(value, 1) for key, value in part.items()}
            for name, part in sorted(parts.items())
        }

    def cpu_seconds_by_part(self) -> dict[str, float]:
        """CPU seconds (user + system, with reaped children) used so far, per part."""
        parts: dict[str, float] = {}
        for proc in self.processes():
            try:
                times = proc.cpu_times()
                name = _part(proc)
            except psutil.Error:
                continue
            used = times.user + times.system + times.children_user + times.children_system
            parts[name] = parts.get(name, 0.0) + used
        return parts

    def wait_workers_warm(self, deadline_s: float = 180.0) -> None:
        deadline = time.monotonic() + deadline_s
        while not self.workers_warm():
            if time.monotonic() > deadline:
                raise TimeoutError(f"workers not warm after {deadline_s} s")
            time.sleep(0.2)  # polling log files a starting worker writes, with a deadline

    def workers_warm(self) -> bool:
        """Every worker has built its SparkSession and entered its loop."""
        logs = sorted((self.home / "logs").glob("worker-*.log"))
        return bool(logs) and all("worker started" in log.read_text() for log in logs)


def _part(proc: psutil.Process) -> str:
    command = " ".join(proc.cmdline()) or proc.name()
    for marker, name in (
        ("launcher api", "api"),
        ("-m worker.main", "worker (python)"),  # what `jetspark worker` execs
        ("java", "worker (spark jvm)"),
        ("pyspark", "worker (spark python)"),
        ("valkey", "valkey"),
        ("postgres", "postgresql"),
        (" up", "jetspark up"),
    ):
        if marker in command:
            return name
    return str(proc.name())


UNLIMITED = {
    "JETSPARK_API_RATE_LIMIT_PER_S": "0",
    "JETSPARK_QUOTA_QUEUED_JOBS": "0",
    "JETSPARK_QUOTA_RUNNING_JOBS": "0",
    "JETSPARK_QUOTA_SSE_CONNECTIONS": "0",
}
"""Benches load the server from one token: its per-principal limits would be measured
instead (``extra_env`` sets them back where a bench measures a limit)."""


@contextmanager
def running_stack(
    *,
    workers: int = 1,
    api_workers: int = 1,
    deadline_s: float = 180.0,
    extra_env: dict[str, str] | None = None,
) -> Iterator[RunningStack]:
    """``jetspark up`` with embedded PostgreSQL and Redis in a temporary home."""
    token = secrets.token_urlsafe(16)
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="jetspark-bench-") as home, _pg_data_removed(home):
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in {"JETSPARK_DATABASE_URL", "JETSPARK_REDIS_URL"}
        }
        env |= {"JETSPARK_HOME": str(Path(home) / ".jetspark"), "JETSPARK_API_TOKENS": token}
        env |= UNLIMITED | (extra_env or {})
        jetspark = Path(sys.executable).with_name("jetspark")
        command = [str(jetspark), "up", "--port", str(port), "--workers", str(workers)]
        process = subprocess.Popen(
            [*command, "--api-workers", str(api_workers)],
            env=env,
            cwd=home,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches the bench, which stops `up` in order
        )
        url = f"http://127.0.0.1:{port}"
        try:
            start_s = wait_ready(url, process, deadline_s=deadline_s)
            yield RunningStack(
                url=url,
                token=token,
                process=process,
                home=Path(home) / ".jetspark",
                start_s=start_s,
            )
        finally:
            terminate(process, grace_s=60)


@contextmanager
def _pg_data_removed(home: str) -> Iterator[None]:
    """As root, the embedded PostgreSQL may keep its data outside the home, behind a link."""
    try:
        yield
    finally:
        remove_data(Path(home) / ".jetspark" / "postgres")


@contextmanager
def direct_stack(
    *,
    api_workers: int = 1,
    deadline_s: float = 120.0,
    extra_env: dict[str, str] | None = None,
    log: Path | None = None,
) -> Iterator[RunningStack]:
    """The API alone under uvicorn, without ``jetspark up`` (and without workers).

    PostgreSQL and Redis come from ``JETSPARK_DATABASE_URL`` / ``JETSPARK_REDIS_URL`` when set,
    else from the embedded servers. A fresh database is made and migrated either way, so the
    figures never depend on what an earlier run left behind. uvicorn runs in its own
    process(es), so the load generator does not share an interpreter with the server.
    """
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from jetspark.db.engine import normalize_url
    from jetspark.db.migrate import upgrade

    token = secrets.token_urlsafe(16)
    with tempfile.TemporaryDirectory(prefix="jetspark-bench-") as home:
        servers: list[EmbeddedServer] = []
        try:
            server_url = os.environ.get("JETSPARK_DATABASE_URL") or _embedded_postgres(
                Path(home), servers
            )
            redis_url = os.environ.get("JETSPARK_REDIS_URL") or _embedded_redis(Path(home), servers)
            name = f"jetspark_bench_{secrets.token_hex(4)}"
            admin = create_engine(normalize_url(server_url), isolation_level="AUTOCOMMIT")
            with admin.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
            url = make_url(normalize_url(server_url)).set(database=name)
            database_url = url.render_as_string(hide_password=False)
            upgrade(database_url)
            env = os.environ | {
                "JETSPARK_DATABASE_URL": database_url,
                "JETSPARK_REDIS_URL": redis_url,
                "JETSPARK_REDIS_NAMESPACE": name,
                "JETSPARK_API_TOKENS": token,
            }
            env |= UNLIMITED | (extra_env or {})
            try:
                with uvicorn_server(
                    APP_FACTORY,
                    env=env,
                    workers=api_workers,
                    factory=True,
                    ready_path="/readyz",
                    deadline_s=deadline_s,
                    log=log,
                ) as (url_base, start_s, process):
                    yield RunningStack(
                        url=url_base, token=token, process=process, home=Path(home), start_s=start_s
                    )
            finally:
                with admin.connect() as conn:
                    conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                admin.dispose()
        finally:
            for server in reversed(servers):
                server.stop()
            remove_data(Path(home) / "pg")


class EmbeddedServer(Protocol):
    def stop(self) -> None: ...


def _embedded_postgres(home: Path, servers: list[EmbeddedServer]) -> str:
    from jetspark.embedded.postgres import EmbeddedPostgres

    server = EmbeddedPostgres(home / "pg")
    servers.append(server)
    return server.start()


def _embedded_redis(home: Path, servers: list[EmbeddedServer]) -> str:
    from jetspark.embedded.redis import EmbeddedRedis

    server = EmbeddedRedis(home / "redis")
    servers.append(server)
    return server.start()


def main() -> None:
    """``python -m bench.stack [workers]``: start time, warm-up time and idle memory."""
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    exit_on_sigterm()
    with running_stack(workers=workers) as stack:
        started = time.perf_counter()
        deadline = started + 180
        while not stack.workers_warm():
            if time.perf_counter() > deadline:
                raise TimeoutError("the workers did not start within 180 s")
            time.sleep(0.2)  # polling the workers' logs, with a deadline
        warm_s = stack.start_s + time.perf_counter() - started
        time.sleep(5)  # let the stack settle before reading its idle memory
        parts = stack.memory_by_part()
        report = {
            "workers": workers,
            "start_to_ready_s": round(stack.start_s, 2),
            "start_to_workers_warm_s": round(warm_s, 2),
            "idle_rss_mib": round(stack.rss_bytes() / 2**20, 1),
            "idle_pss_mib": round(sum(part["pss_mib"] for part in parts.values()), 1),
            "by_part": parts,
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
