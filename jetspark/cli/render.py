"""How the API's answers read in a terminal: aligned tables and one field a line, plain text
that ``grep``, ``awk`` and ``cut`` can read (the live progress of ``submit --wait`` is the
SDK's, ``jetspark.sdk.progress``)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

RESULT_FORMATS = ("table", "jsonl", "csv")


def _short_time(stamp: Any) -> str:
    """``2026-11-23T02:50:17.123+00:00`` → ``2026-11-23 02:50:17``."""
    if not isinstance(stamp, str) or not stamp:
        return "-"
    return stamp.replace("T", " ")[:19]


def _progress(view: dict[str, Any]) -> str:
    progress = view.get("progress") or {}
    return f"in={progress.get('items_in', 0)} out={progress.get('items_out', 0)}"


def _size(count: Any) -> str:
    value = float(count or 0)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024 or unit == "MiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Columns padded to their widest cell, two spaces apart, a header line first."""
    lines = [tuple(header), *(tuple(row) for row in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


def error_text(view: dict[str, Any]) -> str | None:
    error = view.get("error")
    if not isinstance(error, dict):
        return None
    return f"{error.get('type', 'error')}: {error.get('message', '')}"


def job_table(jobs: list[dict[str, Any]]) -> str:
    """The ``jetspark jobs`` listing: newest first, one job a line."""
    return table(
        ("ID", "NAME", "STATUS", "ATTEMPT", "CREATED (UTC)", "ITEMS"),
        (
            (
                str(job.get("id", "")),
                str(job.get("name", "")),
                str(job.get("status", "")),
                str(job.get("attempt", 0)),
                _short_time(job.get("created_at")),
                _progress(job),
            )
            for job in jobs
        ),
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


def snapshot_table(snapshots: list[dict[str, Any]]) -> str:
    """The ``jetspark snapshots`` listing: the last committed one and the exported ones."""
    return table(
        ("SNAPSHOT", "EPOCH", "NAME", "COMMITTED (UTC)", "SIZE"),
        (
            (
                str(s.get("snapshot_id", "")),
                str(s.get("epoch", "")),
                str(s.get("name") or "-"),
                _short_time(s.get("committed_at")),
                _size(s.get("bytes")),
            )
            for s in snapshots
        ),
    )


def log_line(line: dict[str, Any]) -> str:
    """``2026-11-23 02:50:17.123 INFO    job claimed worker=w-1``, then a failure's
    exception chain, each link's type and message and its traceback, indented."""
    stamp = str(line.get("at") or "").replace("T", " ")[:23] or "-"
    fields = " ".join(f"{key}={value}" for key, value in (line.get("fields") or {}).items())
    text = f"{stamp} {str(line.get('level', 'info')).upper():<7} {line.get('event', '')}"
    text = f"{text} {fields}" if fields else text
    for link in line.get("exception") or []:
        text += f"\n    {link.get('type', 'Exception')}: {link.get('message', '')}"
        for trace in str(link.get("traceback") or "").rstrip().splitlines():
            text += f"\n      {trace}"
    return text


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def _columns(records: list[dict[str, Any]]) -> list[str]:
    """Every key, in the order records first show it."""
    return list(dict.fromkeys(key for record in records for key in record))


def write_results(records: Iterable[dict[str, Any]], form: str, out: TextIO) -> int:
    """Write the records as ``form`` (table, jsonl, csv); return how many."""
    if form == "jsonl":  # streamed: a page at a time
        count = 0
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
        return count
    kept = list(records)  # bounded by JETSPARK_RESULTS_MAX_JOB_BYTES
    columns = _columns(kept)
    if form == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([_cell(record.get(c)) for c in columns] for record in kept)
    elif kept:
        rows = ([_cell(record.get(c)) for c in columns] for record in kept)
        out.write(table(columns, rows) + "\n")
    return len(kept)
