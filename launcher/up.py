"""``jetspark up``: PostgreSQL, Redis, the API and N workers on this machine, until Ctrl-C."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import httpx
import psutil
import typer

from jetspark.cli.errors import CliError, first_line
from jetspark.cli.preflight import find_java, require_embedded_servers, require_free_port
from jetspark.cli.reaper import become_subreaper, reap_orphans
from jetspark.cli.services import Services, start_postgres, start_redis
from jetspark.cli.signals import Interrupted, StopSignals
from jetspark.cli.supervisor import Child, Restarts, Supervisor
from jetspark.cli.token import ensure_token
from jetspark.embedded.postgres import EmbeddedPostgres
from jetspark.sdk.token import token_path
from jetspark.settings import (
    ApiSettings,
    DatabaseSettings,
    HomeSettings,
    RedisSettings,
    SparkSettings,
    SupervisorSettings,
)
from jetspark.spark_conf import EXIT_CONFIG, SparkConfError, is_local, user_conf

EXIT_CHILD_DIED = 1
STOP_GRACE_S = 20.0
READY_POLL_S = 0.1
WORKER_STARTED = "worker started"
"""What a worker logs once its SparkSession is built and it takes jobs (worker/loop.py)."""


def _say(message: str) -> None:
    typer.echo(message, err=True)


def _url_host(host: str) -> str:
    """Where clients on this machine reach a server listening on ``host``."""
    if host in {"0.0.0.0", ""}:
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def _child_argv(*args: str) -> list[str]:
    # This interpreter and this installation, whatever the PATH says.
    return [sys.executable, "-m", "launcher", *args]


def _wait_ready(
    base_url: str, supervisor: Supervisor, signals: StopSignals, deadline_s: float
) -> float:
    """Poll ``/readyz`` until 200; fail early if a child exits. Returns the seconds waited."""
    started = time.monotonic()
    with httpx.Client(timeout=2.0) as http:
        while True:
            signals.check()
            dead = supervisor.first_exited()
            if dead is not None:
                raise CliError(_death_message(dead, "before the API was ready"))
            try:
                if http.get(f"{base_url}/readyz").status_code == 200:
                    return time.monotonic() - started
            except httpx.HTTPError:
                pass  # not listening yet
            if time.monotonic() - started > deadline_s:
                raise CliError(
                    f"the API was not ready within {deadline_s:.0f} s "
                    f"(see {supervisor.logs / 'api.log'})"
                )
            signals.wake.wait(READY_POLL_S)  # a signal or a child's exit cuts the wait short


def _check_spark_settings() -> None:
    """The workers' Spark properties parse, or ``up`` stops before starting anything."""
    try:
        user_conf()
    except SparkConfError as error:
        raise CliError(str(error)) from None


def _death_message(child: Child, when: str) -> str:
    return (
        f"{child.name} (pid {child.pid}) exited with code {child.process.returncode} {when}; "
        f"last line of {child.log}: {first_line(child.last_log_line())}"
    )


def _banner(base_url: str, token: str | None, home: Path, workers: int, services: Services) -> str:
    token_line = (
        f"  API token  {token}   (also in {token_path(home)})"
        if token
        else "  API token  one of JETSPARK_API_TOKENS"
    )
    return "\n".join(
        [
            "jetspark is up",
            f"  web page   {base_url}/",
            f"  API docs   {base_url}/docs",
            token_line,
            f"  workers    {workers} (Spark warms up in the background; logs in {home / 'logs'})",
            f"  data       {services.describe()}",
            "Ctrl-C stops everything; jobs are kept for the next `jetspark up`.",
        ]
    )


SERVER_CHECK_S = 2.0
"""How often the embedded servers are checked (a ``pg_ctl status`` each time)."""


def _supervise(
    supervisor: Supervisor,
    signals: StopSignals,
    started: float,
    services: Services,
    restarts: Restarts,
) -> int:
    """Block until a stop signal (0) or a child that keeps dying (non-zero).

    A child that dies is started again after a backoff, and an embedded server that died is
    started again on its data; ``restarts`` says when one dies too often to go on. Meanwhile,
    say when each worker has its SparkSession: from then on, jobs start at once.
    """
    warming = [child for child in supervisor.children if child.name.startswith("worker")]
    pending: dict[str, tuple[float, Child]] = {}
    next_check = time.monotonic() + SERVER_CHECK_S
    while signals.requested is None:
        due = min([at for at, _ in pending.values()], default=time.monotonic() + 1.0)
        signals.wake.wait(max(0.05, min(1.0, due - time.monotonic())))
        signals.wake.clear()
        reap_orphans(keep=[child.pid for child in supervisor.children])
        for child in supervisor.children:
            if child.name in pending or child.process.poll() is None:
                continue
            if child.process.returncode == EXIT_CONFIG:
                _say(f"error: {_death_message(child, '(a setting it cannot use)')}; stopping")
                return EXIT_CHILD_DIED
            wait = restarts.died(child.name)
            if wait is None:
                gave_up = f"({restarts.max_deaths} times in {restarts.window_s:.0f} s)"
                _say(f"error: {_death_message(child, gave_up)}; stopping everything")
                return EXIT_CHILD_DIED
            _say(f"{_death_message(child, 'unexpectedly')}; restarting in {wait:.1f} s")
            pending[child.name] = (time.monotonic() + wait, child)
        for name, (at, child) in list(pending.items()):
            if time.monotonic() >= at and signals.requested is None:
                del pending[name]
                fresh = supervisor.restart(child)
                restarts.restarted(name)
                if name.startswith("worker"):
                    warming = [c for c in warming if c.name != name] + [fresh]
        if time.monotonic() >= next_check:
            next_check = time.monotonic() + SERVER_CHECK_S
            if not _keep_servers_up(services, restarts):
                return EXIT_CHILD_DIED
        for child in [child for child in warming if WORKER_STARTED in child.output()]:
            warming.remove(child)
            _say(f"{child.name} ready: Spark is warm ({time.monotonic() - started:.1f} s)")
    _say(f"{signals.requested}: stopping")
    return 0


def _keep_servers_up(services: Services, restarts: Restarts) -> bool:
    """Start an embedded server that died again, on its data; False to give up."""
    for server in services.started:
        if server.running():
            continue
        name = "postgresql" if isinstance(server, EmbeddedPostgres) else "redis"
        if restarts.died(name) is None:
            _say(f"error: embedded {name} keeps dying; stopping everything")
            return False
        _say(f"embedded {name} died; starting it again on its data")
        try:
            server.start()
        except (RuntimeError, TimeoutError, OSError) as error:
            _say(f"embedded {name} did not start again: {first_line(str(error))}")
            continue  # tried again at the next check, counted as another death
        restarts.restarted(name)
    return True


def up(
    host: Annotated[str, typer.Option("--host", help="Address the API listens on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="The API's port.")] = 8000,
    workers: Annotated[
        int, typer.Option("--workers", min=0, max=64, help="Worker processes to start.")
    ] = 1,
    api_workers: Annotated[
        int,
        typer.Option("--api-workers", min=1, max=64, help="API processes sharing the port."),
    ] = 1,
    ready_timeout: Annotated[
        float, typer.Option("--ready-timeout", min=1, help="Seconds to wait for /readyz.")
    ] = 120.0,
) -> None:
    """Start PostgreSQL and Redis (embedded unless configured), the API and workers."""
    home = HomeSettings().home
    spark_master = SparkSettings().master
    require_embedded_servers(DatabaseSettings().url, RedisSettings().url)
    if workers:
        find_java()
        _check_spark_settings()
    require_free_port(host, port)
    become_subreaper()
    services = Services()
    supervisor: Supervisor | None = None
    code = 0
    started = time.monotonic()
    with StopSignals() as signals:
        try:
            home.mkdir(parents=True, exist_ok=True)
            _say(f"starting servers (data in {home})")
            start_postgres(services, home, DatabaseSettings().url)
            signals.check()
            start_redis(services, home, RedisSettings().url)
            signals.check()
            _migrate(services.database_url)
            configured_tokens = ApiSettings().tokens
            token = None if configured_tokens else ensure_token(home)
            limits = SupervisorSettings()
            restarts = Restarts(
                home.absolute() / "supervisor.json",
                max_deaths=limits.max_deaths,
                window_s=limits.window_s,
            )
            restarts.state_file.unlink(missing_ok=True)  # counts are per run of `up`
            env = worker_env(os.environ) | {
                "JETSPARK_SUPERVISOR_STATE_FILE": str(restarts.state_file),
                "JETSPARK_DATABASE_URL": services.database_url,
                "JETSPARK_REDIS_URL": services.redis_url,
            }
            if is_local(spark_master):
                # The embedded default: Spark inside each worker, on loopback.
                env["PYSPARK_PYTHON"] = sys.executable
                env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            tokens = ",".join(configured_tokens) if token is None else token
            supervisor = Supervisor(env=env, logs=home / "logs")
            _say(f"starting the API ({api_workers} process(es)) and {workers} worker(s)")
            api_argv = _child_argv(
                "api", "--host", host, "--port", str(port), "--workers", str(api_workers)
            )
            supervisor.start("api", api_argv, env=env | {"JETSPARK_API_TOKENS": tokens})
            for number in range(1, workers + 1):
                supervisor.start(f"worker-{number}", _child_argv("worker"))
            base_url = f"http://{_url_host(host)}:{port}"
            ready_s = _wait_ready(base_url, supervisor, signals, ready_timeout)
            typer.echo(_banner(base_url, token, home, workers, services))
            _say(f"ready in {ready_s:.1f} s")
            code = _supervise(supervisor, signals, started, services, restarts)
        except Interrupted as stop:
            _say(f"{stop}: stopping")
        except CliError:
            if signals.requested is None:
                raise
            # Ctrl-C reaches the server tools we run in the foreground (initdb, pg_ctl) too:
            # their failure is the interruption, not an error to report.
            _say(f"{signals.requested}: stopping")
        finally:
            if supervisor is not None:
                killed = supervisor.stop(grace_s=STOP_GRACE_S, hurry=signals.hurry)
                if killed:
                    _say(f"killed after {STOP_GRACE_S:.0f} s: {', '.join(killed)}")
            services.stop()
            _reap_stopped_servers()
    _say("stopped")
    if code:
        raise typer.Exit(code)


WORKER_SECRETS = ("JETSPARK_API_TOKENS", "JETSPARK_API_PRINCIPALS", "JETSPARK_TOKEN")
"""What only the API (or the CLI) needs: a worker runs hostile DAGs and never gets them."""


def worker_env(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without the API's secrets: what every child but the API starts with."""
    return {name: value for name, value in environ.items() if name not in WORKER_SECRETS}


def _reap_stopped_servers(deadline_s: float = 10.0) -> None:
    """The postmaster was adopted (see :mod:`jetspark.cli.reaper`): wait for it to exit."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        reap_orphans()
        if not psutil.Process().children():
            return
        time.sleep(0.05)  # a stopped server's last processes are exiting; bounded by deadline


def _migrate(database_url: str) -> None:
    """``jetspark migrate`` as a child: ``up`` itself never loads Alembic and the tables, which
    would stay in its memory for the whole session."""
    done = subprocess.run(
        _child_argv("migrate"),
        env=dict(os.environ) | {"JETSPARK_DATABASE_URL": database_url},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        told = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
        reason = told[-1].removeprefix("error: ") if told else first_line(done.stderr)
        raise CliError(f"migrating the database failed: {reason}")
