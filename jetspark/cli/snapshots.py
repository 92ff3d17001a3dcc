"""Client commands on snapshots: ``snapshots`` (Jet's list-snapshots) and ``save-snapshot``."""

from __future__ import annotations

from typing import Annotated

import typer

from jetspark.cli.connection import (
    DEFAULT_URL,
    JobIdArgument,
    TokenOption,
    UrlOption,
    connect,
    job_id,
)
from jetspark.cli.render import snapshot_table


def snapshots(job: JobIdArgument, url: UrlOption = DEFAULT_URL, token: TokenOption = None) -> None:
    """List a job's last committed snapshot and those exported from it, newest first."""
    with connect(url, token) as client:
        listed = [snapshot.to_dict() for snapshot in client.snapshots(job_id(job))]
    typer.echo(snapshot_table(listed) if listed else "no snapshots")


def save_snapshot(
    job: JobIdArgument,
    name: Annotated[str, typer.Argument(metavar="NAME", help="The name to export it under.")],
    cancel: Annotated[
        bool, typer.Option("--cancel", "-C", help="Cancel the job once it is exported.")
    ] = False,
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
) -> None:
    """Export the job's last committed snapshot as NAME (it outlives the job).

    A new job that names it in `config.initial_snapshot` starts from it.
    """
    with connect(url, token) as client:
        exported = client.export_snapshot(job_id(job), name)
        typer.echo(f"snapshot {exported.snapshot_id} (epoch {exported.epoch}) exported as {name!r}")
        if cancel:
            view = client.cancel(job_id(job))
            typer.echo(f"{view.id} {view.status.value}")


def delete_snapshot(
    job: JobIdArgument,
    name: Annotated[str, typer.Argument(metavar="NAME", help="The name it was exported as.")],
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
) -> None:
    """Delete the snapshot exported as NAME (its job may be deleted already)."""
    with connect(url, token) as client:
        client.delete_snapshot(job_id(job), name)
    typer.echo(f"snapshot {name!r} deleted")
