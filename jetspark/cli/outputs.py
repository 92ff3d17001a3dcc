"""Client commands that read what a job made: ``results`` and ``logs``."""

from __future__ import annotations

import sys
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
from jetspark.cli.errors import CliError
from jetspark.cli.render import RESULT_FORMATS, log_line, write_results


def results(
    job: JobIdArgument,
    form: Annotated[
        str,
        typer.Option("--format", help=f"How to print the records: {', '.join(RESULT_FORMATS)}."),
    ] = "table",
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
) -> None:
    """Print a job's sink.results records: an aligned table, JSON lines, or CSV."""
    if form not in RESULT_FORMATS:
        raise CliError(f"no format {form!r}: one of {', '.join(RESULT_FORMATS)}")
    with connect(url, token) as client:
        count = write_results(iter(client.results(job_id(job))), form, sys.stdout)
    if count == 0 and form == "table":
        typer.echo("no results", err=True)


def logs(
    job: JobIdArgument,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Then print new lines until the job ends.")
    ] = False,
    from_: Annotated[
        int, typer.Option("--from", min=0, help="From this line on (0: the first kept).")
    ] = 0,
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
) -> None:
    """Print a job's log lines (its Python processors' own among them), oldest first."""
    with connect(url, token) as client:
        for line in client.log_lines(job_id(job), from_=from_, follow=follow):
            typer.echo(log_line(line))
