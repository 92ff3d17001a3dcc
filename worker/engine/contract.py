"""What the worker hands the engine and what it gets back."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RunnableJob:
    """A claimed job: its accepted definition and its stored execution plan (both JSON)."""

    id: uuid.UUID
    attempt: int
    definition: dict[str, Any]
    plan: dict[str, Any]


@dataclass
class JobControl:
    """Signals from the worker to a running job."""

    job_group: str
    """The Spark job group the worker set for this job's thread."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    results_cap: int = 100_000
    counts: Callable[[], Mapping[str, VertexCounts]] | None = None
    """Set by the engine: the per-vertex counts known so far (the live metrics read it from
    another thread; it may raise while the engine adds vertices)."""


@dataclass
class VertexCounts:
    items_in: int = 0
    items_out: int = 0


@dataclass
class JobOutcome:
    """What a finished job produced: ``sink.results`` records and per-vertex counts."""

    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Records per ``sink.results`` vertex, in order, at most ``results_cap`` in all."""
    vertex_counts: dict[str, VertexCounts] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    sinks: list[str] = field(default_factory=list)

    @property
    def items_in(self) -> int:
        """Items that entered the DAG: what its sources emitted."""
        return sum(self.vertex_counts[s].items_out for s in self.sources if s in self.vertex_counts)

    @property
    def items_out(self) -> int:
        """Items that left the DAG: what its sinks received."""
        return sum(self.vertex_counts[s].items_in for s in self.sinks if s in self.vertex_counts)
