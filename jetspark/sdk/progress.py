"""How a followed job shows its progress (``Client.wait``, ``jetspark submit --wait``).

On a terminal, one live line (rich) rewritten in place: a spinner, the status, the attempt,
items in and out, the time it ran, the worker. In a notebook, the same line as a cell output
updated in place (IPython's display handles). Anywhere else (a pipe, a log file, CI), a plain
line per change, which scripts can read.
"""

from __future__ import annotations

import io
import sys
from datetime import UTC, datetime
from typing import Any, Protocol, TextIO

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

TERMINAL_STATUSES = frozenset({"COMPLETED", "FAILED", "CANCELLED"})
STATUS_STYLES = {
    "COMPLETED": "bold green",
    "FAILED": "bold red",
    "CANCELLED": "bold yellow",
    "SUSPENDED": "yellow",
    "RUNNING": "bold cyan",
}
ENDED_MARKS = {"COMPLETED": "✔", "FAILED": "✘", "CANCELLED": "■"}


def _progress(view: dict[str, Any]) -> str:
    progress = view.get("progress") or {}
    return f"in={progress.get('items_in', 0)} out={progress.get('items_out', 0)}"


def progress_line(view: dict[str, Any]) -> str:
    """The plain line per change: ``STATUS  attempt=N  in=N out=N  worker=W``."""
    worker = view.get("worker")
    parts = [f"{view.get('status', '?'):<10}", f"attempt={view.get('attempt', 0)}", _progress(view)]
    if worker:
        parts.append(f"worker={worker}")
    return "  ".join(parts)


def _stamp(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        return datetime.fromisoformat(value)
    return None


def _ran(view: dict[str, Any]) -> str:
    started = _stamp(view.get("started_at"))
    if started is None:
        return "not started"
    finished = _stamp(view.get("finished_at")) or datetime.now(UTC)
    seconds = max(0.0, (finished - started).total_seconds())
    return (
        f"{seconds:.1f} s" if seconds < 120 else f"{int(seconds // 60)} min {int(seconds % 60)} s"
    )


def _line(view: dict[str, Any]) -> Text:
    status = str(view.get("status", "?"))
    progress = view.get("progress") or {}
    return Text.assemble(
        (f"{view.get('name', '')}  ", "bold"),
        (f"{status:<10}", STATUS_STYLES.get(status, "")),
        f"  attempt {view.get('attempt', 0)}",
        f"  items in {progress.get('items_in', 0):,} out {progress.get('items_out', 0):,}",
        f"  ran {_ran(view)}",
        f"  worker {view['worker']}" if view.get("worker") else "",
    )


class JobLine:
    """The live line of a job: a spinner while it runs (a mark once it ended), then what the
    plain line says; drawn anew at each refresh, so the time it ran goes on."""

    def __init__(self) -> None:
        self.view: dict[str, Any] = {}
        self.spinner = Spinner("dots", style="cyan")

    def __rich__(self) -> RenderableType:
        status = str(self.view.get("status", "?"))
        line = _line(self.view)
        if status in TERMINAL_STATUSES:
            return Text.assemble((f"{ENDED_MARKS[status]} ", STATUS_STYLES[status]), line)
        self.spinner.update(text=line)
        error = self.view.get("error")
        if isinstance(error, dict):  # a failed attempt about to be retried says why
            return Group(self.spinner, Text(f"  last error: {error.get('message', '')}", "red"))
        return self.spinner


class Shown(Protocol):
    """Where progress goes: each view of the job as it changes, then ``close``."""

    def show(self, view: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class Lines:
    """A plain line per change (not a terminal)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.last = ""

    def show(self, view: dict[str, Any]) -> None:
        line = progress_line(view)
        if line != self.last:
            print(line, file=self.out, flush=True)
            self.last = line

    def close(self) -> None:
        pass


class Terminal:
    """One live line on a terminal, redrawn a few times a second (the spinner, the time)."""

    def __init__(self, out: TextIO) -> None:
        self.line = JobLine()
        self.live = Live(
            self.line, console=Console(file=out, highlight=False), refresh_per_second=8
        )

    def show(self, view: dict[str, Any]) -> None:
        self.line.view = view
        if not self.live.is_started:
            self.live.start()
        self.live.refresh()

    def close(self) -> None:
        if self.live.is_started:
            self.live.stop()


class Notebook:
    """The live line as a notebook cell's output, replaced in place on each change."""

    def __init__(self) -> None:
        self.line = JobLine()
        self.handle: Any = None

    def show(self, view: dict[str, Any]) -> None:
        from IPython.display import HTML, display

        self.line.view = view
        html = HTML(as_html(self.line))  # type: ignore[no-untyped-call]
        if self.handle is None:
            self.handle = display(html, display_id=True)  # type: ignore[no-untyped-call]
        else:
            self.handle.update(html)

    def close(self) -> None:
        pass


def as_html(shown: RenderableType) -> str:
    """``shown`` as rich draws it, in HTML with inline styles (a notebook's output)."""
    console = Console(
        file=io.StringIO(), record=True, width=120, color_system="truecolor", force_jupyter=False
    )
    console.print(shown)
    return console.export_html(
        inline_styles=True,
        code_format='<pre style="font-family: monospace; margin: 0">{code}</pre>',
    )


def in_notebook() -> bool:
    """Running in a Jupyter kernel (a notebook, JupyterLab, VS Code's notebooks)."""
    return bool(Console().is_jupyter)


def progress_for(progress: bool | TextIO | None) -> Shown | None:
    """``None``: shown in a notebook or when stderr is a terminal; ``True``: shown on stderr
    (or in the notebook); ``False``: not shown; a stream: shown there."""
    if progress is False:
        return None
    if not isinstance(progress, bool) and progress is not None:
        return Terminal(progress) if progress.isatty() else Lines(progress)
    if in_notebook():
        return Notebook()
    if sys.stderr.isatty():
        return Terminal(sys.stderr)
    return Lines(sys.stderr) if progress else None
