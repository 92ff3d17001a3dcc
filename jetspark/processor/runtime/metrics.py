"""Counters one processor's tasklet keeps, for the metrics issue (SPEC §6)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class TaskletMetrics:
    """What processor ``global_index`` of ``vertex`` did in one run."""

    vertex: str
    global_index: int
    cooperative: bool = True
    overruns: int = 0
    """Calls of a cooperative processor that ran past the cooperative budget: it blocked,
    which the contract forbids (``ProcessorTasklet.cooperative_budget_ns``)."""
    items_in: dict[int, int] = field(default_factory=dict)
    """Items removed from the inbox, per inbound ordinal."""
    items_out: dict[int, int] = field(default_factory=dict)
    """Items drained from the outbox, per outbound ordinal."""
    refusals: int = 0
    """Offers the outbox refused because a bucket was full."""
    blocked_ns: int = 0
    """Time from a first refusal until the runtime drained the outbox."""
    calls: int = 0
    busy_ns: int = 0
    """Time spent inside processor callbacks."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
