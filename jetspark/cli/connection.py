"""The client commands' one way to the API: the SDK's ``Client``, with every failure turned
into a one-line :class:`CliError`."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import httpx
import typer

from jetspark.cli.errors import CliError, describe_problem, one_line
from jetspark.sdk.client import DEFAULT_URL, ApiError, Client
from jetspark.sdk.token import resolve_token, token_path
from jetspark.settings import HomeSettings

REQUEST_TIMEOUT_S = 30.0

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
JobIdArgument = Annotated[str, typer.Argument(metavar="ID", help="The job's id.")]

__all__ = ["DEFAULT_URL", "JobIdArgument", "TokenOption", "UrlOption", "connect", "job_id"]


def job_id(text: str) -> uuid.UUID:
    """A job id as typed, or a one-line error."""
    try:
        return uuid.UUID(text.strip())
    except ValueError:
        raise CliError(f"{text!r} is not a job id (a UUID, as `jetspark jobs` lists)") from None


def _explain(error: ApiError, token_given: bool) -> str:
    message = describe_problem(
        error.status, {"title": error.title, "detail": error.detail, "errors": error.errors}
    )
    if error.status == 401:
        where = (
            "check --token / JETSPARK_TOKEN"
            if token_given
            else f"check the token in {token_path(HomeSettings().home)}"
        )
        message = f"{message} — {where}"
    return message


@contextmanager
def connect(url: str, token: str | None) -> Iterator[Client]:
    """The SDK's client for ``url``; an answer or a failure that ends the command is raised
    as a :class:`CliError` naming what went wrong in one line."""
    resolved = resolve_token(token)
    if resolved is None:
        raise CliError(
            "no token: pass --token, set JETSPARK_TOKEN or run `jetspark up` "
            f"(which writes {token_path(HomeSettings().home)})"
        )
    base = url.rstrip("/")
    try:
        with Client(base, resolved, timeout_s=REQUEST_TIMEOUT_S) as client:
            yield client
    except ApiError as error:
        raise CliError(_explain(error, token_given=bool(token))) from None
    except httpx.ConnectError as error:
        raise CliError(
            f"cannot reach the API at {base} ({one_line(str(error)) or 'refused'}); "
            "is it running? (--url or JETSPARK_URL)"
        ) from None
    except httpx.TimeoutException:
        raise CliError(f"the API at {base} did not answer in time") from None
    except httpx.HTTPError as error:
        raise CliError(f"request to {base} failed: {one_line(str(error))}") from None
