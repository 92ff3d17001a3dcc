"""What a streaming job tells the metrics reporter: every processor's watermarks."""

from __future__ import annotations

from typing import Any

from jetspark.metrics import names
from worker.engine.streaming.watermarks import WatermarkTracker


def marks_of(tracker: WatermarkTracker, late: dict[str, int]) -> dict[str, list[dict[str, Any]]]:
    """Per vertex, each processor's watermark fields as ``jetspark.metrics.report`` names them;
    a window's late items are shown on its first processor (they are counted per vertex)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for vertex, marks in tracker.marks.items():
        out[vertex] = [
            {
                names.TOP_OBSERVED_WM: m.top_observed,
                names.COALESCED_WM: m.coalesced,
                names.LAST_FORWARDED_WM: m.forwarded,
                "idle": m.idle,
                "late_items_dropped": late.get(vertex, 0) if g == 0 else 0,
            }
            for g, m in enumerate(marks)
        ]
    return out
