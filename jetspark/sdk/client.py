"""``Client``: submit a DAG, follow it live (SSE), read its results and logs, steer it.

Built on the client generated from the committed OpenAPI document (``make client``): every
call goes through ``clients.jetspark_client``, so a change of the API that the document
does not carry fails the drift test, not a user's script. The ``jetspark`` CLI is built on it.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import httpx

from clients.jetspark_client import AuthenticatedClient
from clients.jetspark_client.api.dags import dags_validate
from clients.jetspark_client.api.jobs import (
    jobs_cancel,
    jobs_delete,
    jobs_get,
    jobs_list,
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
    JobPage,
    JobSpec,
    JobStatus,
    JobView,
    LogPage,
    ProblemDetail,
    ResultPage,
    SnapshotList,
    SnapshotView,
    ValidationReport,
)
from clients.jetspark_client.types import UNSET, Response
from jetspark.retry import Retry
from jetspark.sdk.dag import DAG
from jetspark.sdk.progress import TERMINAL_STATUSES, progress_for
from jetspark.sdk.token import resolve_token

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]

DEFAULT_URL = "http://127.0.0.1:8000"
JobRef = JobView | uuid.UUID | str
T = TypeVar("T")
RETRIED_STATUSES = frozenset({429, 503})
"""Rate limited, or PostgreSQL/Redis down behind the API: tried again with backoff."""
LOG_PAGE = 1000
LATE_LINES_S = 1.0
"""A worker's last lines (``job completed``) follow the job's last status change: how long
``log_lines(follow=True)`` still looks for them after the job ended."""


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


class _Refused(Exception):
    """An answer worth asking again for (429, 503)."""

    def __init__(self, problem: ProblemDetail) -> None:
        super().__init__(problem.detail)
        self.problem = problem


def _problem_of(status: int, content: bytes, parsed: object = None) -> ProblemDetail:
    """A failed answer as a problem, whether or not the server (or a proxy) sent one."""
    if isinstance(parsed, ProblemDetail):
        return parsed
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if isinstance(body, dict) and {"title", "status"} <= body.keys():
        return ProblemDetail.from_dict(
            {"type": "about:blank", "detail": "", **body, "status": status}
        )
    text = content.decode("utf-8", "replace").strip()
    return ProblemDetail(
        type_="about:blank",
        title=f"HTTP {status}",
        status=status,
        detail=" ".join(text.split())[:200] or "no details given",
    )


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
                jobs_results,
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


class LineCursor:
    """Which of a job's log lines (numbered by ``seq``) were given out. Two threads of a
    worker (a restarted stream's old and new attempts) number their lines in one order and
    publish them in another: a follower that skipped every line below the newest it saw
    lost the one published late. This gives each line once, whatever the order."""

    MAX_AHEAD = 10_000
    """Lines kept past a gap that never fills (a line trimmed, or its event lost)."""

    def __init__(self, from_: int) -> None:
        self.complete_to = from_
        """Every line below this was given out (or is before ``from_``)."""
        self.ahead: set[int] = set()

    def take(self, seq: int) -> bool:
        """Whether line ``seq`` is new: give it out (and remember it) when True."""
        if seq < self.complete_to or seq in self.ahead:
            return False
        self.ahead.add(seq)
        if len(self.ahead) > self.MAX_AHEAD:  # a gap that never fills: go on past it
            self.complete_to = min(self.ahead)
        while self.complete_to in self.ahead:
            self.ahead.remove(self.complete_to)
            self.complete_to += 1
        return True


class Client:
    """The jetspark API at ``url`` with a bearer ``token`` (default: ``JETSPARK_TOKEN`` or
    the one ``jetspark up`` keeps in its home)."""

    def __init__(
        self, url: str = DEFAULT_URL, token: str | None = None, *, timeout_s: float = 30.0
    ) -> None:
        resolved = resolve_token(token)
        if resolved is None:
            raise ValueError("no token: pass token=, set JETSPARK_TOKEN or run `jetspark up`")
        self.url = url.rstrip("/")
        self.api = AuthenticatedClient(
            base_url=self.url, token=resolved, timeout=httpx.Timeout(timeout_s)
        )
        self.limited = Retry(
            f"requests to {url}", retry_on=lambda e: isinstance(e, _Refused), deadline_s=60
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.api.get_httpx_client().close()

    def call(self, operation: ModuleType, kind: type[T], *args: Any, **kw: Any) -> T:
        """One generated operation (its module, e.g. ``jobs_get``). A 429 (rate limited) or a
        503 (the API's servers down) is tried again with backoff for a minute; any other
        failure raises ``ApiError``, with the server's problem when it sent one."""

        def once() -> T:
            response: Response[Any] = operation.sync_detailed(*args, client=self.api, **kw)
            status, parsed = int(response.status_code), response.parsed
            if status in RETRIED_STATUSES:
                raise _Refused(_problem_of(status, response.content, parsed))
            if status >= 400 or not isinstance(parsed, kind):
                raise ApiError(_problem_of(status, response.content, parsed))
            return parsed

        try:
            return self.limited(once)
        except _Refused as refused:
            raise ApiError(refused.problem) from None

    # --- jobs ----------------------------------------------------------------------------

    def validate(self, dag: DAG | Mapping[str, Any]) -> ValidationReport:
        """``POST /v1/dags:validate``: the plan, or ``ApiError`` (422 with each pointer)."""
        body = dag.to_json() if isinstance(dag, DAG) else dict(dag)
        return self.call(dags_validate, ValidationReport, body=JobSpec.from_dict(body))

    def submit(
        self, dag: DAG | Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> JobView:
        """``POST /v1/jobs``; a refused DAG raises ``ApiError`` with its pointers."""
        body = dag.to_json() if isinstance(dag, DAG) else dict(dag)
        return self.call(
            jobs_submit,
            JobView,
            body=JobSpec.from_dict(body),
            idempotency_key=idempotency_key if idempotency_key is not None else UNSET,
        )

    def get(self, job: JobRef) -> JobView:
        return self.call(jobs_get, JobView, _job_id(job))

    def jobs(
        self,
        *,
        status: Sequence[str] = (),
        name: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> JobPage:
        """``GET /v1/jobs``: a page of jobs, newest first, in any of ``status`` (all when
        empty) and named ``name``; ``page.next_cursor`` asks for the next page."""
        return self.call(
            jobs_list,
            JobPage,
            status=[JobStatus(s.upper()) for s in status] if status else UNSET,
            name=name if name is not None else UNSET,
            limit=limit,
            cursor=cursor if cursor is not None else UNSET,
        )

    def cancel(self, job: JobRef) -> JobView:
        return self.call(jobs_cancel, JobView, _job_id(job))

    def suspend(self, job: JobRef) -> JobView:
        """Stop a streaming job at a snapshot; ``resume`` goes on from it."""
        return self.call(jobs_suspend, JobView, _job_id(job))

    def resume(self, job: JobRef) -> JobView:
        return self.call(jobs_resume, JobView, _job_id(job))

    def restart(self, job: JobRef) -> JobView:
        return self.call(jobs_restart, JobView, _job_id(job))

    def delete(self, job: JobRef) -> None:
        """Delete a finished job with its results, logs, metrics and unnamed snapshots."""
        self.call(jobs_delete, type(None), _job_id(job))

    def results(self, job: JobRef, *, page_size: int = 1000) -> Results:
        return Results(self, _job_id(job), page_size)

    def logs(self, job: JobRef, *, from_: int = 0, size: int = 1000) -> list[dict[str, Any]]:
        """The job's log lines from line ``from_``: ``{seq, at, level, event, fields?,
        exception?}``; a failure's line carries the exception chain with its tracebacks."""
        page = self.call(jobs_logs, LogPage, _job_id(job), from_=from_, size=size)
        return [line.to_dict() for line in page.lines]

    def log_lines(
        self, job: JobRef, *, from_: int = 0, follow: bool = False
    ) -> Iterator[dict[str, Any]]:
        """Every kept line from line ``from_`` on, a page at a time; with ``follow``, then
        each new line as the worker logs it, until the job has ended."""
        job_id = _job_id(job)
        # Listening before reading the pages: a line logged in between is not lost (it comes
        # twice, and its ``seq`` tells).
        stream = self._open_events(job_id, None) if follow else None
        seen = LineCursor(from_)
        try:
            for line in self._log_pages(job_id, from_):
                if seen.take(line["seq"]):
                    yield line
            if stream is None:
                return
            for event in self._stream_events(job_id, stream):
                if event.kind == "log" and seen.take(int(event.data.get("seq", -1))):
                    yield event.data
            time.sleep(LATE_LINES_S)  # the ended job's worker writes its last lines
            for line in self._log_pages(job_id, seen.complete_to):  # and any event missed
                if seen.take(line["seq"]):
                    yield line
        finally:
            if stream is not None:
                stream.close()

    def _log_pages(self, job_id: uuid.UUID, after: int) -> Iterator[dict[str, Any]]:
        while True:
            page = self.call(jobs_logs, LogPage, job_id, from_=after, size=LOG_PAGE)
            lines = [line.to_dict() for line in page.lines]
            yield from lines
            if not lines or lines[-1]["seq"] + 1 >= page.total:
                return
            after = lines[-1]["seq"] + 1

    def snapshots(self, job: JobRef) -> list[SnapshotView]:
        """The job's last committed snapshot and those exported from it, newest first."""
        listed = self.call(snapshots_list, SnapshotList, _job_id(job))
        return list(listed.items)

    def export_snapshot(self, job: JobRef, name: str) -> SnapshotView:
        """Export the job's last snapshot under ``name`` (an ``initial_snapshot`` later)."""
        return self.call(
            snapshots_export, SnapshotView, _job_id(job), body=ExportRequest(name=name)
        )

    def delete_snapshot(self, job: JobRef, name: str) -> None:
        """Delete the snapshot exported as ``name`` (the job itself may be gone)."""
        self.call(snapshots_delete, type(None), _job_id(job), name)

    # --- following a job -----------------------------------------------------------------

    def events(self, job: JobRef) -> Iterator[Event]:
        """The job's server-sent events until its ``end``; a dropped connection is
        reconnected with ``Last-Event-ID``, so nothing is missed or repeated."""
        job_id = _job_id(job)
        yield from self._stream_events(
            job_id, self._reconnect(job_id)(self._open_events, job_id, None)
        )

    @staticmethod
    def _reconnect(job_id: uuid.UUID) -> Retry:
        return Retry(
            f"events of job {job_id}",
            retry_on=lambda error: isinstance(error, httpx.TransportError),
            deadline_s=120,
        )

    def _stream_events(self, job_id: uuid.UUID, response: httpx.Response) -> Iterator[Event]:
        """The events of an open stream, reconnecting after a drop, until ``end``."""
        last: str | None = None
        reconnect = self._reconnect(job_id)
        while True:
            try:
                for event in _sse(response):
                    last = event.id or last
                    yield event
                    if event.kind == "end":
                        return
            except httpx.TransportError:
                pass  # dropped mid-stream: reconnect from the last event seen
            finally:
                response.close()
            response = reconnect(self._open_events, job_id, last)

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
            raise ApiError(_problem_of(response.status_code, response.content))
        return response

    def wait(
        self,
        job: JobRef,
        *,
        progress: bool | TextIO | None = None,
        check: bool = False,
    ) -> JobView:
        """Follow the job's events until it ends; return its final view.

        ``progress`` (``jetspark.sdk.progress``): by default a live line on a terminal's
        stderr or in a notebook's cell, nothing elsewhere; ``True`` also a line per change
        on a stderr that is no terminal; ``False`` nothing; a stream: shown there. ``check``:
        raise ``JobNotCompleted`` unless it COMPLETED.
        """
        shown = progress_for(progress)
        job_id = _job_id(job)
        view = job if isinstance(job, JobView) else self.get(job_id)
        try:
            if shown is not None:
                shown.show(view.to_dict())
            for event in self.events(job_id):
                if event.kind in ("status", "metrics", "end"):
                    view = self.get(job_id)
                    if shown is not None:
                        shown.show(view.to_dict())
            if view.status.value not in TERMINAL_STATUSES:
                view = self.get(job_id)  # the end event follows the last transition
                if shown is not None:
                    shown.show(view.to_dict())
        finally:
            if shown is not None:
                shown.close()
        if check and view.status.value != "COMPLETED":
            raise JobNotCompleted(view)
        return view

    def run(self, dag: DAG | Mapping[str, Any], *, progress: bool | None = None) -> Results:
        """Submit, wait for COMPLETED (else ``JobNotCompleted``), return the results."""
        view = self.submit(dag)
        self.wait(view, progress=progress, check=True)
        return self.results(view)


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
