"""Client commands: submit (optionally following the job), jobs, status, cancel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from jetspark.cli.client import DEFAULT_URL, ApiClient, resolve_token
from jetspark.cli.errors import EXIT_JOB_NOT_COMPLETED, CliError, one_line
from jetspark.cli.render import (
    TERMINAL_STATUSES,
    error_text,
    job_details,
    job_table,
    progress_line,
)

LONG_POLL_S = 30
"""How long one ``GET /v1/jobs/{id}?wait_s=`` may hang waiting for a change."""

UrlOption = Annotated[
    str, typer.Option("--url", envvar="JETSPARK_URL", help="Base URL of the API.")
]
TokenOption = Annotated[
    str | None,
    typer.Option(
        "--token",
        envvar="JETSPARK_TOKEN",
        show_default=False,
        help="Bearer token; default: the one `jetspark up` keeps in <home>/token.",
    ),
]


def _client(url: str, token: str | None, *, timeout_s: float = 30.0) -> ApiClient:
    return ApiClient(url, resolve_token(token), timeout_s=timeout_s)


def read_job_file(path: Path) -> Any:
    """The DAG file as JSON, or a one-line error naming what is wrong with it."""
    try:
        text = path.read_text(encoding="utf-8")
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
    file: Annotated[Path, typer.Argument(help="A job definition (SPEC §3), e.g. a DAG JSON file.")],
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow the job until it ends; exit 1 unless COMPLETED.")
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
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
    with _client(url, token, timeout_s=LONG_POLL_S + 15) as api:
        view = api.json(api.request("POST", "/v1/jobs", json=body, headers=headers))
        typer.echo(view["id"])
        if not wait:
            return
        final = follow(api, view)
    if final.get("status") != "COMPLETED":
        raise CliError(
            f"job {final.get('id')} {final.get('status')}: {error_text(final) or 'no error given'}",
            exit_code=EXIT_JOB_NOT_COMPLETED,
        )


def follow(api: ApiClient, view: dict[str, Any]) -> dict[str, Any]:
    """Print a progress line on each change until a terminal status; return the last view.

    Each request is a long-poll: with ``If-None-Match`` the server answers as soon as the job
    changes, or 304 after ``wait_s``, so this follows the job live without busy polling.
    """
    typer.echo(progress_line(view), err=True)
    while view.get("status") not in TERMINAL_STATUSES:
        response = api.request(
            "GET",
            f"/v1/jobs/{view['id']}",
            params={"wait_s": LONG_POLL_S},
            headers={"If-None-Match": f'"{view["version"]}"'},
            allow=(304,),
        )
        if response.status_code == 304:
            continue
        changed = api.json(response)
        if progress_line(changed) != progress_line(view):
            typer.echo(progress_line(changed), err=True)
        view = changed
    return view


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
    """List jobs, newest first."""
    params: dict[str, Any] = {"limit": limit}
    if status:
        params["status"] = [s.upper() for s in status]
    if name:
        params["name"] = name
    with _client(url, token) as api:
        page = api.json(api.request("GET", "/v1/jobs", params=params))
    items: list[dict[str, Any]] = page.get("items", [])
    typer.echo(job_table(items) if items else "no jobs")


def status(
    job_id: Annotated[str, typer.Argument(metavar="ID", help="The job's id.")],
    as_json: Annotated[bool, typer.Option("--json", help="The API's JSON view as is.")] = False,
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
) -> None:
    """Show one job."""
    with _client(url, token) as api:
        view = api.json(api.request("GET", f"/v1/jobs/{job_id}"))
    typer.echo(json.dumps(view, indent=2) if as_json else job_details(view))


def cancel(
    job_id: Annotated[str, typer.Argument(metavar="ID", help="The job's id.")],
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
) -> None:
    """Cancel a job (a running one stops within a heartbeat)."""
    with _client(url, token) as api:
        view = api.json(api.request("POST", f"/v1/jobs/{job_id}/cancel"))
    typer.echo(f"{view['id']} {view['status']}")
