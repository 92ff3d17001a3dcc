"""The metrics document an epoch publishes: per vertex counts and watermarks."""

from __future__ import annotations

import time
import uuid
from typing import Any

from jetspark.dag.plan import ExecutionPlan
from jetspark.metrics import names
from worker.engine.contract import VertexCounts
from worker.engine.streaming.scope import EpochScope
from worker.engine.streaming.watermarks import min_or_none


def epoch_metrics(
    job_id: uuid.UUID, scope: EpochScope, counts: dict[str, VertexCounts], plan: ExecutionPlan
) -> dict[str, Any]:
    now = int(time.time() * 1000)
    vertices: dict[str, Any] = {}
    for vertex in plan.vertices:
        marks = scope.watermarks.of(vertex.name)
        active = [m for m in marks if not m.idle]
        coalesced = min_or_none([m.coalesced for m in active]) if active else None
        c = counts.get(vertex.name, VertexCounts())
        vertices[vertex.name] = {
            names.ITEMS_IN: c.items_in,
            names.ITEMS_OUT: c.items_out,
            names.COALESCED_WM: coalesced,
            names.LAG_MS: None if coalesced is None else max(0, now - coalesced),
            "late_items_dropped": scope.late.get(vertex.name, 0),
            "processors": [
                {
                    "index": g,
                    names.TOP_OBSERVED_WM: m.top_observed,
                    names.COALESCED_WM: m.coalesced,
                    names.LAST_FORWARDED_WM: m.forwarded,
                    "idle": m.idle,
                }
                for g, m in enumerate(marks)
            ],
        }
    return {"job_id": str(job_id), "at_ms": now, "epoch": scope.epoch, "vertices": vertices}
