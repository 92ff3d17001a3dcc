"""Client commands on jobs, Jet's verbs and ours: submit, jobs, status, cancel, suspend, resume,
restart, delete. Each goes through the SDK's ``Client`` (``jetspark.cli.connection``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from jetspark.cli.connection import (
    DEFAULT_URL,
    JobIdArgument,
    TokenOption,
    UrlOption,
    connect,
    job_id,
)
from jetspark.cli.errors import EXIT_JOB_NOT_COMPLETED, CliError, one_line
from jetspark.cli.render import error_text, job_details, job_table

STATUSES = (
    "QUEUED",
    "STARTING",
    "RUNNING",
    "COMPLETING",
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "SUSPENDED",
    "RESTARTING",
)


def read_job_file(path: Path) -> Any:
    """The DAG file (``-``: standard input) as JSON, or a one-line error naming what is wrong
    with it."""
    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise CliError(f"cannot read {path}: {one_line(reason)}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CliError(
            f"{path} is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
        ) from None


def submit(
    file: Annotated[
        Path, typer.Argument(help="A job (SPEC §3) as a JSON file; - reads standard input.")
    ],
    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help="Follow the job (progress on stderr) until it ends; exit 1 unless COMPLETED.",
        ),
    ] = False,
    idempotency_key: Annotated[
        str | None,
        typer.Option("--idempotency-key", help="Resubmitting with the same key returns the job."),
    ] = None,
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
) -> None:
    """Submit a job; print its id (and, with --wait, its progress until it ends)."""
    body = read_job_file(file)
    if not isinstance(body, dict):
        raise CliError(f"{file} holds JSON, but not an object (a job: name, dag, config)")
    with connect(url, token) as client:
        view = client.submit(body, idempotency_key=idempotency_key)
        typer.echo(str(view.id))
        if not wait:
            return
        # A live line on a terminal, a plain line per change elsewhere (jetspark.sdk.progress).
        final = client.wait(view, progress=sys.stderr).to_dict()
    if final.get("status") != "COMPLETED":
        raise CliError(
            f"job {final.get('id')} {final.get('status')}: {error_text(final) or 'no error given'}",
            exit_code=EXIT_JOB_NOT_COMPLETED,
        )


def jobs(
    status: Annotated[
        list[str] | None,
        typer.Option("--status", help="Only jobs in this status (repeatable).", show_default=False),
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Only jobs with this name.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=200, help="At most this many.")] = 50,
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
) -> None:
    """List jobs, newest first (Jet's list-jobs)."""
    wanted = [s.upper() for s in status or []]
    unknown = [s for s in wanted if s not in STATUSES]
    if unknown:
        raise CliError(f"no status {', '.join(unknown)}: one of {', '.join(STATUSES)}")
    with connect(url, token) as client:
        page = client.jobs(status=wanted, name=name, limit=limit)
    items = [job.to_dict() for job in page.items]
    typer.echo(job_table(items) if items else "no jobs")


def status(
    job: JobIdArgument,
    as_json: Annotated[bool, typer.Option("--json", help="The API's JSON view as is.")] = False,
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
) -> None:
    """Show one job."""
    with connect(url, token) as client:
        view = client.get(job_id(job)).to_dict()
    typer.echo(json.dumps(view, indent=2) if as_json else job_details(view))


def cancel(job: JobIdArgument, url: UrlOption = DEFAULT_URL, token: TokenOption = None) -> None:
    """Cancel a job (a running one stops within a heartbeat)."""
    with connect(url, token) as client:
        view = client.cancel(job_id(job))
    typer.echo(f"{view.id} {view.status.value}")


def suspend(job: JobIdArgument, url: UrlOption = DEFAULT_URL, token: TokenOption = None) -> None:
    """Suspend a queued or running job (a stream at its last snapshot); `resume` goes on."""
    with connect(url, token) as client:
        view = client.suspend(job_id(job))
    typer.echo(f"{view.id} {view.status.value}")


def resume(job: JobIdArgument, url: UrlOption = DEFAULT_URL, token: TokenOption = None) -> None:
    """Queue a suspended job again (a stream goes on from its last snapshot)."""
    with connect(url, token) as client:
        view = client.resume(job_id(job))
    typer.echo(f"{view.id} {view.status.value}")


def restart(job: JobIdArgument, url: UrlOption = DEFAULT_URL, token: TokenOption = None) -> None:
    """Stop a running job and queue it again as a new attempt (from its last snapshot)."""
    with connect(url, token) as client:
        view = client.restart(job_id(job))
    typer.echo(f"{view.id} {view.status.value}")


def delete(job: JobIdArgument, url: UrlOption = DEFAULT_URL, token: TokenOption = None) -> None:
    """Delete a finished job: its results, logs, metrics and unnamed snapshots."""
    with connect(url, token) as client:
        client.delete(job_id(job))
    typer.echo(f"{job_id(job)} deleted")
