"""The ``jetspark`` CLI's client commands: one typer app, one error policy for every command.

The console script (``launcher.entry:main``) runs ``launcher.main:app``: the same app built
with the server commands (``up``, ``api``, ``worker``, ``migrate``) first, which name the
API's and the worker's programs and so live in the outer package ``launcher`` (the core never
names them).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import typer

from jetspark.cli import jobs, outputs, snapshots
from jetspark.cli.errors import EXIT_ERROR, CliError, first_line


def one_line_errors(command: Callable[..., None]) -> Callable[..., None]:
    """Print ``error: <message>`` on stderr and exit non-zero instead of a traceback."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except CliError as error:
            typer.echo(f"error: {error.message}", err=True)
            raise typer.Exit(error.exit_code) from None
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(130) from None
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except Exception as error:
            typer.echo(f"error: {type(error).__name__}: {first_line(str(error))}", err=True)
            raise typer.Exit(EXIT_ERROR) from None

    return run


Command = tuple[str, Callable[..., None]]

COMMANDS: tuple[Command, ...] = (
    ("submit", jobs.submit),
    ("jobs", jobs.jobs),
    ("status", jobs.status),
    ("cancel", jobs.cancel),
    ("suspend", jobs.suspend),
    ("resume", jobs.resume),
    ("restart", jobs.restart),
    ("snapshots", snapshots.snapshots),
    ("save-snapshot", snapshots.save_snapshot),
    ("delete-snapshot", snapshots.delete_snapshot),
    ("logs", outputs.logs),
    ("results", outputs.results),
    ("delete", jobs.delete),
)
JET_NAMES: dict[str, Callable[..., None]] = {
    "list-jobs": jobs.jobs,
    "list-snapshots": snapshots.snapshots,
}
"""Jet's CLI spells these two so; they work here too, unlisted."""


def build_app(servers: Sequence[Command] = ()) -> typer.Typer:
    """The ``jetspark`` app: ``servers`` (listed first), then the client commands."""
    app = typer.Typer(
        name="jetspark",
        help="Run Hazelcast Jet-style dataflow DAGs on Apache Spark behind a REST API.",
        no_args_is_help=True,
        add_completion=False,
        # Expected failures are CliErrors (one line); an unexpected one is one line too, not
        # a screenful of locals.
        pretty_exceptions_enable=False,
    )
    for name, function in (*servers, *COMMANDS):
        app.command(name)(one_line_errors(function))
    for alias, same in JET_NAMES.items():
        app.command(alias, hidden=True)(one_line_errors(same))
    return app


app = build_app()
"""The client commands alone (``python -m jetspark.cli``)."""
