"""Every job metric's name, as SPEC §6 and Jet's Management Center spell them.

Workers report, the API serves, Prometheus exports and the web page reads these names: a
metric is renamed here or nowhere.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

ITEMS_IN: Final = "items_in"
ITEMS_OUT: Final = "items_out"
RECEIVED_BY_ORDINAL: Final = "received_by_ordinal"
EMITTED_BY_ORDINAL: Final = "emitted_by_ordinal"
TOP_OBSERVED_WM: Final = "top_observed_wm"
COALESCED_WM: Final = "coalesced_wm"
LAST_FORWARDED_WM: Final = "last_forwarded_wm"
QUEUE_SIZE: Final = "queue_size"
QUEUE_CAPACITY: Final = "queue_capacity"
BACKPRESSURE_RATIO: Final = "backpressure_ratio"
BACKPRESSURE_LEVEL: Final = "backpressure_level"
BUSY_RATIO: Final = "busy_ratio"
INPUT_RATE: Final = "input_rate_per_s"
PROCESSING_RATE: Final = "processing_rate_per_s"
LAG_MS: Final = "lag_ms"
EVENT_TIME_RATE: Final = "event_time_per_s"
EVENT_TIME_GAP_MS: Final = "event_time_gap_ms"


class BackpressureLevel(StrEnum):
    """SPEC §6: ok < 0.1 <= low < 0.5 <= high."""

    ok = "ok"
    low = "low"
    high = "high"

    @classmethod
    def of(cls, ratio: float) -> BackpressureLevel:
        if ratio < 0.1:
            return cls.ok
        return cls.low if ratio < 0.5 else cls.high
