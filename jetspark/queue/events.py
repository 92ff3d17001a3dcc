"""A job's live events on a Redis Stream: workers publish, the API's SSE endpoint follows.

Status changes are not published here: they are rows in ``job_transitions`` (PostgreSQL is
the truth). This stream carries what only lives in Redis: metric ticks and snapshot commits.
It is capped, so a job that runs for days keeps only its recent ticks.
"""

from __future__ import annotations

import json
import uuid
from enum import StrEnum
from typing import Any

from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient

MAX_EVENTS_PER_JOB = 10_000
EVENTS_TTL_S = 7 * 24 * 3600
"""An ended job's stream is dropped a week after its last event."""


class EventKind(StrEnum):
    metrics = "metrics"
    snapshot = "snapshot"
    log = "log"
    """A line of the job's log (``jetspark.joblogs``)."""


def publish(
    client: RedisClient, keys: Keys, job_id: uuid.UUID, kind: EventKind, data: dict[str, Any]
) -> str:
    """Append one event to the job's stream; returns its stream id."""
    stream = keys.job_events(job_id)
    pipe = client.pipeline(transaction=False)
    pipe.xadd(
        stream,
        {"kind": kind.value, "data": json.dumps(data, separators=(",", ":"))},
        maxlen=MAX_EVENTS_PER_JOB,
        approximate=True,
    )
    pipe.expire(stream, EVENTS_TTL_S)
    entry_id, _ = pipe.execute()
    return entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
