"""How job views (the API's JSON) read in a terminal."""

from __future__ import annotations

from typing import Any

TERMINAL_STATUSES = frozenset({"COMPLETED", "FAILED", "CANCELLED"})


def _short_time(stamp: Any) -> str:
    """``2026-11-23T02:50:17.123+00:00`` → ``2026-11-23 02:50:17``."""
    if not isinstance(stamp, str) or not stamp:
        return "-"
    return stamp.replace("T", " ")[:19]


def _progress(view: dict[str, Any]) -> str:
    progress = view.get("progress") or {}
    return f"in={progress.get('items_in', 0)} out={progress.get('items_out', 0)}"


def progress_line(view: dict[str, Any]) -> str:
    """One line per observed change while ``submit --wait`` follows a job."""
    worker = view.get("worker")
    parts = [
        f"{view.get('status', '?'):<10}",
        f"attempt={view.get('attempt', 0)}",
        _progress(view),
    ]
    if worker:
        parts.append(f"worker={worker}")
    return "  ".join(parts)


def error_text(view: dict[str, Any]) -> str | None:
    error = view.get("error")
    if not isinstance(error, dict):
        return None
    return f"{error.get('type', 'error')}: {error.get('message', '')}"


def job_table(jobs: list[dict[str, Any]]) -> str:
    """The ``jetspark jobs`` listing: newest first, one job a line."""
    header = ("ID", "NAME", "STATUS", "ATTEMPT", "CREATED (UTC)", "ITEMS")
    rows = [
        (
            str(job.get("id", "")),
            str(job.get("name", "")),
            str(job.get("status", "")),
            str(job.get("attempt", 0)),
            _short_time(job.get("created_at")),
            _progress(job),
        )
        for job in jobs
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    )


def job_details(view: dict[str, Any]) -> str:
    """The ``jetspark status`` view: one field a line."""
    lines = [
        ("id", view.get("id")),
        ("name", view.get("name")),
        ("status", view.get("status")),
        ("attempt", view.get("attempt")),
        ("worker", view.get("worker") or "-"),
        ("created", _short_time(view.get("created_at"))),
        ("started", _short_time(view.get("started_at"))),
        ("finished", _short_time(view.get("finished_at"))),
        ("items", _progress(view)),
    ]
    error = error_text(view)
    if error:
        lines.append(("error", error))
    return "\n".join(f"{key + ':':<10}{value}" for key, value in lines)
