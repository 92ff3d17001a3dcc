"""Columns every stateful vertex's state frame carries (windows, aggregates, Python state).

With ``routing.SLOT`` they let the epoch loop store state by partition and hand it to the
right processor again, under the same or another parallelism.
"""

from __future__ import annotations

PROCESSOR = "__processor"
"""The processor index g the row belongs to (the watermark dicts are keyed by it)."""
PARTITION = "__partition"
"""The Jet partition of the row's key (0..partition_count-1; g when there is no key)."""
