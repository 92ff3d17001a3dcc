"""``Client``: submit a DAG, follow it live (SSE), read its results, steer it.

Built on the client generated from the committed OpenAPI document (``make client``): every
call goes through ``clients.jetspark_client``, so a change of the API that the document
does not carry fails the drift test, not a user's script.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import httpx

from clients.jetspark_client import AuthenticatedClient
from clients.jetspark_client.api.dags import dags_validate
from clients.jetspark_client.api.jobs import (
    jobs_cancel,
    jobs_delete,
    jobs_get,
    jobs_logs,
    jobs_restart,
    jobs_results,
    jobs_resume,
    jobs_submit,
    jobs_suspend,
)
from clients.jetspark_client.api.snapshots import (
    snapshots_delete,
    snapshots_export,
    snapshots_list,
)
from clients.jetspark_client.models import (
    ExportRequest,
    JobSpec,
    JobView,
    LogPage,
    ProblemDetail,
    ResultPage,
    SnapshotList,
    SnapshotView,
    ValidationReport,
)
from clients.jetspark_client.types import UNSET
from jetspark.cli.render import TERMINAL_STATUSES, progress_line
from jetspark.retry import Retry
from jetspark.sdk.dag import DAG

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]

DEFAULT_URL = "http://127.0.0.1:8000"
JobRef = JobView | uuid.UUID | str
T = TypeVar("T")


class ApiError(Exception):
    """The API answered with a problem (RFC 9457): ``status``, ``title``, ``detail``,
    ``errors`` (``{pointer, message}`` per problem of a refused DAG)."""

    def __init__(self, problem: ProblemDetail) -> None:
        self.status = problem.status
        self.title = problem.title
        self.detail = problem.detail
        self.errors: list[dict[str, Any]] = [
            e.to_dict() for e in (problem.errors if isinstance(problem.errors, list) else [])
        ]
        super().__init__(f"{problem.status} {problem.title}: {problem.detail}")


class _RateLimited(Exception):
    def __init__(self, problem: ProblemDetail) -> None:
        super().__init__(problem.detail)
        self.problem = problem


class JobNotCompleted(Exception):
    """``wait(..., check=True)`` saw the job end FAILED or CANCELLED."""

    def __init__(self, view: JobView) -> None:
        self.view = view
        error = view.error
        reason = f"{error.type_}: {error.message}" if error is not None else "no error given"
        super().__init__(f"job {view.id} {view.status.value}: {reason}")


def _job_id(job: JobRef) -> uuid.UUID:
    if isinstance(job, JobView):
        return job.id
    return job if isinstance(job, uuid.UUID) else uuid.UUID(str(job))


def _parsed(parsed: object, kind: type[T]) -> T:
    if isinstance(parsed, ProblemDetail):
        raise ApiError(parsed)
    if not isinstance(parsed, kind):
        raise TypeError(f"the API answered with {type(parsed).__name__}, not {kind.__name__}")
    return parsed


@dataclass
class Results:
    """A job's ``sink.results`` records: iterate them (paged lazily), or ``to_pandas()``."""

    client: Client
    job_id: uuid.UUID
    page_size: int = 1000

    def __iter__(self) -> Iterator[dict[str, Any]]:
        cursor: str | None = None
        while True:
            page = self.client.call(
                jobs_results.sync,
                ResultPage,
                self.job_id,
                limit=self.page_size,
                cursor=cursor if cursor is not None else UNSET,
            )
            for item in page.items:
                yield item.to_dict()
            if not isinstance(page.next_cursor, str):
                return
            cursor = page.next_cursor

    def to_list(self) -> list[dict[str, Any]]:
        return list(self)

    def to_pandas(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame.from_records(self.to_list())


@dataclass(frozen=True)
class Event:
    """One server-sent event of a job: ``kind`` is status, metrics, snapshot or end."""

    kind: str
    data: dict[str, Any]
    id: str | None


class Client:
    """The jetspark API at ``url`` with a bearer ``token`` (default: ``JETSPARK_TOKEN`` or
    the one ``jetspark up`` keeps in its home)."""

    def __init__(
        self, url: str = DEFAULT_URL, token: str | None = None, *, timeout_s: float = 30.0
    ) -> None:
        from jetspark.cli.client import resolve_token

        resolved = resolve_token(token)
        if resolved is None:
            raise ValueError("no token: pass token=, set JETSPARK_TOKEN or run `jetspark up`")
        self.api = AuthenticatedClient(
            base_url=url.rstrip("/"), token=resolved, timeout=httpx.Timeout(timeout_s)
        )
        self.limited = Retry(
            f"requests to {url}", retry_on=lambda e: isinstance(e, _RateLimited), deadline_s=60
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.api.get_httpx_client().close()

    def call(self, operation: Callable[..., object], kind: type[T], *args: Any, **kw: Any) -> T:
        """One generated operation; a 429 (rate limited) is tried again with backoff, any
        other problem raises ``ApiError``."""

        def once() -> T:
            parsed = operation(*args, client=self.api, **kw)
            if isinstance(parsed, ProblemDetail) and parsed.status == 429:
                raise _RateLimited(parsed)
            return _parsed(parsed, kind)

        try:
            return self.limited(once)
        except _RateLimited as refused:
            raise ApiError(refused.problem) from None

    # --- jobs ----------------------------------------------------------------------------

    def validate(self, dag: DAG | Mapping[str, Any]) -> ValidationReport:
        """``POST /v1/dags:validate``: the plan, or ``ApiError`` (422 with each pointer)."""
        body = dag.to_json() if isinstance(dag, DAG) else dict(dag)
        return self.call(dags_validate.sync, ValidationReport, body=JobSpec.from_dict(body))

    def submit(
        self, dag: DAG | Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> JobView:
        """``POST /v1/jobs``; a refused DAG raises ``ApiError`` with its pointers."""
        body = dag.to_json() if isinstance(dag, DAG) else dict(dag)
        return self.call(
            jobs_submit.sync,
            JobView,
            body=JobSpec.from_dict(body),
            idempotency_key=idempotency_key if idempotency_key is not None else UNSET,
        )

    def get(self, job: JobRef) -> JobView:
        return self.call(jobs_get.sync, JobView, _job_id(job))

    def cancel(self, job: JobRef) -> JobView:
        return self.call(jobs_cancel.sync, JobView, _job_id(job))

    def suspend(self, job: JobRef) -> JobView:
        """Stop a streaming job at a snapshot; ``resume`` goes on from it."""
        return self.call(jobs_suspend.sync, JobView, _job_id(job))

    def resume(self, job: JobRef) -> JobView:
        return self.call(jobs_resume.sync, JobView, _job_id(job))

    def restart(self, job: JobRef) -> JobView:
        return self.call(jobs_restart.sync, JobView, _job_id(job))

    def delete(self, job: JobRef) -> None:
        """Delete a finished job with its results, logs, metrics and unnamed snapshots."""
        self.call(jobs_delete.sync, type(None), _job_id(job))

    def results(self, job: JobRef, *, page_size: int = 1000) -> Results:
        return Results(self, _job_id(job), page_size)

    def logs(self, job: JobRef, *, from_: int = 0, size: int = 1000) -> list[dict[str, Any]]:
        """The job's log lines from line ``from_``: ``{seq, at, level, event, fields?,
        exception?}``; a failure's line carries the exception chain with its tracebacks."""
        page = self.call(jobs_logs.sync, LogPage, _job_id(job), from_=from_, size=size)
        return [line.to_dict() for line in page.lines]

    def snapshots(self, job: JobRef) -> list[SnapshotView]:
        """The job's last committed snapshot and those exported from it, newest first."""
        listed = self.call(snapshots_list.sync, SnapshotList, _job_id(job))
        return list(listed.items)

    def export_snapshot(self, job: JobRef, name: str) -> SnapshotView:
        """Export the job's last snapshot under ``name`` (an ``initial_snapshot`` later)."""
        return self.call(
            snapshots_export.sync, SnapshotView, _job_id(job), body=ExportRequest(name=name)
        )

    def delete_snapshot(self, job: JobRef, name: str) -> None:
        """Delete the snapshot exported as ``name`` (the job itself may be gone)."""
        self.call(snapshots_delete.sync, type(None), _job_id(job), name)

    # --- following a job -----------------------------------------------------------------

    def events(self, job: JobRef) -> Iterator[Event]:
        """The job's server-sent events until its ``end``; a dropped connection is
        reconnected with ``Last-Event-ID``, so nothing is missed or repeated."""
        job_id = _job_id(job)
        last: str | None = None
        reconnect = Retry(
            f"events of job {job_id}",
            retry_on=lambda error: isinstance(error, httpx.TransportError),
            deadline_s=120,
        )
        while True:
            response = reconnect(self._open_events, job_id, last)
            try:
                for event in _sse(response):
                    last = event.id or last
                    yield event
                    if event.kind == "end":
                        return
            except httpx.TransportError:
                continue  # dropped mid-stream: reconnect from the last event seen
            finally:
                response.close()

    def _open_events(self, job_id: uuid.UUID, last: str | None) -> httpx.Response:
        headers = {"Accept": "text/event-stream"}
        if last is not None:
            headers["Last-Event-ID"] = last
        http = self.api.get_httpx_client()
        request = http.build_request(
            "GET",
            f"/v1/jobs/{job_id}/events",
            headers=headers,
            timeout=httpx.Timeout(30, read=60),  # the server pings every 10 s
        )
        response = http.send(request, stream=True)
        if response.status_code != 200:
            response.read()
            response.close()
            raise ApiError(ProblemDetail.from_dict(response.json()))
        return response

    def wait(
        self,
        job: JobRef,
        *,
        progress: bool | TextIO | None = None,
        check: bool = False,
    ) -> JobView:
        """Follow the job's events until it ends; return its final view.

        ``progress``: a line per change on a terminal (default: when stderr is one), or on
        the given stream. ``check``: raise ``JobNotCompleted`` unless it COMPLETED.
        """
        out = _progress_stream(progress)
        job_id = _job_id(job)
        shown = ""
        view = self.get(job_id)
        for event in self.events(job_id):
            if event.kind in ("status", "metrics", "end"):
                view = self.get(job_id)
                line = progress_line(view.to_dict())
                if out is not None and line != shown:
                    _show(out, line, shown)
                    shown = line
        if out is not None and out.isatty():
            print(file=out)
        if view.status.value not in TERMINAL_STATUSES:
            view = self.get(job_id)  # the end event follows the last transition
        if check and view.status.value != "COMPLETED":
            raise JobNotCompleted(view)
        return view

    def run(self, dag: DAG | Mapping[str, Any], *, progress: bool | None = None) -> Results:
        """Submit, wait for COMPLETED (else ``JobNotCompleted``), return the results."""
        view = self.submit(dag)
        self.wait(view, progress=progress, check=True)
        return self.results(view)


def _progress_stream(progress: bool | TextIO | None) -> TextIO | None:
    if progress is None:
        return sys.stderr if sys.stderr.isatty() else None
    if isinstance(progress, bool):
        return sys.stderr if progress else None
    return progress


def _show(out: TextIO, line: str, shown: str) -> None:
    """On a terminal one line, rewritten in place; elsewhere a line per change."""
    if out.isatty():
        print(f"\r{line.ljust(len(shown))}", end="", file=out, flush=True)
    else:
        print(line, file=out, flush=True)


def _sse(response: httpx.Response) -> Iterator[Event]:
    """Parse ``text/event-stream`` (WHATWG): fields until a blank line; comments skipped."""
    kind, data, event_id = "message", list[str](), None
    for line in response.iter_lines():
        if not line:
            if data:
                yield Event(kind, json.loads("\n".join(data)), event_id)
            kind, data = "message", []
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            kind = value
        elif field == "data":
            data.append(value)
        elif field == "id":
            event_id = value
