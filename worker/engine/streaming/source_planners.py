"""What each source reads in an epoch: offsets carried between epochs, ranges planned per epoch.

An epoch's ranges are planned on the driver before it runs and, under exactly-once, written
to PostgreSQL first: a replayed epoch reads exactly the items the lost attempt read, so
every sink's output for that epoch is the same. Offsets and ranges are plain JSON.
"""

from __future__ import annotations

import os
from typing import Any, Protocol

from pydantic import BaseModel

from jetspark.dag import kinds as p
from jetspark.dag.data_paths import PathRefused, check_path

Json = dict[str, Any]


class SourcePlanner(Protocol):
    """How one source kind moves through its input, epoch by epoch."""

    def start(self, params: BaseModel, now_ms: int) -> Json:
        """The offsets of a job's first epoch."""
        ...

    def plan(self, params: BaseModel, offsets: Json, now_ms: int, max_items: int) -> Json:
        """The range the source's processors read this epoch."""
        ...

    def advance(self, params: BaseModel, offsets: Json, planned: Json) -> Json:
        """Where the epoch after ``planned`` starts."""
        ...

    def exhausted(self, params: BaseModel, offsets: Json) -> bool:
        """Nothing will ever follow: a bounded source was read to its end."""
        ...

    def is_empty(self, planned: Json) -> bool:
        """Does this range read nothing?"""
        ...


class SequencePlanner:
    """``source.sequence``: with ``rate_per_s``, item ``seq`` is due ``seq/rate`` seconds after
    the job started and carries that moment as ``ts``; without it, up to ``max_items`` per
    epoch, each epoch's items stamped with the epoch's planning time."""

    def start(self, params: BaseModel, now_ms: int) -> Json:
        assert isinstance(params, p.SequenceSource)
        return {"next": params.start, "t0_ms": now_ms}

    def plan(self, params: BaseModel, offsets: Json, now_ms: int, max_items: int) -> Json:
        assert isinstance(params, p.SequenceSource)
        low, t0 = int(offsets["next"]), int(offsets["t0_ms"])
        if params.rate_per_s is not None:
            due = params.start + int((now_ms - t0) * params.rate_per_s / 1000)
            high = max(low, min(due, low + max_items))
        else:
            high = low + max_items
        if params.count is not None:
            high = min(high, params.start + params.count)
        return {"low": low, "high": high, "t0_ms": t0, "stamp_ms": now_ms}

    def advance(self, params: BaseModel, offsets: Json, planned: Json) -> Json:
        return {**offsets, "next": planned["high"]}

    def exhausted(self, params: BaseModel, offsets: Json) -> bool:
        assert isinstance(params, p.SequenceSource)
        return params.count is not None and offsets["next"] >= params.start + params.count

    def is_empty(self, planned: Json) -> bool:
        return bool(planned["high"] <= planned["low"])


class OncePlanner:
    """Any bounded source: everything in the first epoch, nothing after."""

    def start(self, params: BaseModel, now_ms: int) -> Json:
        return {"done": False}

    def plan(self, params: BaseModel, offsets: Json, now_ms: int, max_items: int) -> Json:
        return {"all": not offsets.get("done", False)}

    def advance(self, params: BaseModel, offsets: Json, planned: Json) -> Json:
        return {**offsets, "done": True}

    def exhausted(self, params: BaseModel, offsets: Json) -> bool:
        return bool(offsets.get("done", False))

    def is_empty(self, planned: Json) -> bool:
        if "files" in planned:  # a watched directory (``FilesPlanner``)
            return not planned["files"]
        return not planned.get("all", True)


class FilesPlanner(OncePlanner):
    """``source.files``: the whole path once or, with ``watch``, every new file as it appears
    (a file is new when its path was not read before; files are read whole)."""

    def start(self, params: BaseModel, now_ms: int) -> Json:
        return {"done": False, "seen": []}

    def plan(self, params: BaseModel, offsets: Json, now_ms: int, max_items: int) -> Json:
        assert isinstance(params, p.FilesSource)
        if not params.watch:
            return super().plan(params, offsets, now_ms, max_items)
        seen = offsets.get("seen", [])
        new = [f for f in sorted(_listing(params.path)) if f not in set(seen)]
        # A file read before gives an epoch without new files its columns.
        return {"files": new, "seen_any": seen[0] if seen else None}

    def advance(self, params: BaseModel, offsets: Json, planned: Json) -> Json:
        seen = sorted(set(offsets.get("seen", [])) | set(planned.get("files", [])))
        return {**super().advance(params, offsets, planned), "seen": seen}

    def exhausted(self, params: BaseModel, offsets: Json) -> bool:
        assert isinstance(params, p.FilesSource)
        return not params.watch and super().exhausted(params, offsets)


def _listing(path: str) -> list[str]:
    """The visible files directly in ``path`` (or the file itself), under the data roots."""
    try:
        path = check_path(path).location
    except PathRefused:
        return []  # the job fails naming why when it reads (``FilesSourceOp``)
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        return []
    return [
        os.path.join(path, name)
        for name in os.listdir(path)
        if not name.startswith((".", "_")) and os.path.isfile(os.path.join(path, name))
    ]
