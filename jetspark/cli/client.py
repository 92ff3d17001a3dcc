"""HTTP to the API for the client commands, with every failure turned into a one-line error."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from jetspark.cli.errors import CliError, describe_problem, one_line
from jetspark.cli.token import read_token, token_path
from jetspark.settings import HomeSettings

DEFAULT_URL = "http://127.0.0.1:8000"
REQUEST_TIMEOUT_S = 30.0


def resolve_token(given: str | None, home: Path | None = None) -> str | None:
    """``--token`` / ``JETSPARK_TOKEN``, else the token ``jetspark up`` kept in its home."""
    if given:
        return given
    return read_token(home if home is not None else HomeSettings().home)


class ApiClient:
    """A thin httpx client: base URL, bearer token, and problem+json → :class:`CliError`."""

    def __init__(self, base_url: str, token: str | None, *, timeout_s: float = REQUEST_TIMEOUT_S):
        self.base_url = base_url.rstrip("/")
        self.has_token = token is not None
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout_s)

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
        allow: tuple[int, ...] = (),
    ) -> httpx.Response:
        """Send; a status of 400 or more (unless in ``allow``) raises :class:`CliError`."""
        try:
            response = self.http.request(
                method,
                path,
                json=json,
                params=params,
                headers=headers,
                timeout=timeout_s if timeout_s is not None else httpx.USE_CLIENT_DEFAULT,
            )
        except httpx.ConnectError as error:
            raise CliError(
                f"cannot reach the API at {self.base_url} ({one_line(str(error)) or 'refused'}); "
                "is it running? (--url or JETSPARK_URL)"
            ) from None
        except httpx.TimeoutException:
            raise CliError(f"the API at {self.base_url} did not answer in time") from None
        except httpx.HTTPError as error:
            raise CliError(f"request to {self.base_url} failed: {one_line(str(error))}") from None
        if response.status_code >= 400 and response.status_code not in allow:
            raise CliError(self._explain(response))
        return response

    def _explain(self, response: httpx.Response) -> str:
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        message = describe_problem(response.status_code, body)
        if response.status_code == 401:
            source = (
                "check --token / JETSPARK_TOKEN"
                if self.has_token
                else f"no token: pass --token, set JETSPARK_TOKEN or run `jetspark up` "
                f"(which writes {token_path(HomeSettings().home)})"
            )
            message = f"{message} — {source}"
        return message

    def json(self, response: httpx.Response) -> Any:
        """The body as JSON, or a one-line error if the server sent something else."""
        try:
            return response.json()
        except ValueError:
            raise CliError(
                f"the API at {self.base_url} answered {response.status_code} without JSON"
            ) from None
