"""The signature of a webhook POST, and how a receiver checks it.

``X-Jetspark-Signature: sha256=<hex>`` is HMAC-SHA256, keyed by ``JETSPARK_WEBHOOK_SECRET``,
of ``<X-Jetspark-Timestamp>.<raw body>``: the timestamp (Unix seconds) is signed with the
body, so a receiver that refuses old timestamps refuses a replayed request, and one that
remembers ``X-Jetspark-Delivery`` ids drops a repeated delivery.
"""

from __future__ import annotations

import hashlib
import hmac
import time

SIGNATURE_HEADER = "X-Jetspark-Signature"
TIMESTAMP_HEADER = "X-Jetspark-Timestamp"
DELIVERY_HEADER = "X-Jetspark-Delivery"
EVENT_HEADER = "X-Jetspark-Event"
EVENT = "job.status_changed"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Jetspark-Signature`` value of ``body`` sent at ``timestamp``."""
    signed = str(timestamp).encode() + b"." + body
    return "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def verify(
    secret: str,
    body: bytes,
    *,
    signature_header: str,
    timestamp_header: str,
    tolerance_s: float = 300.0,
    now: float | None = None,
) -> bool:
    """What a receiver runs: True when the signature is the body's and the timestamp is
    within ``tolerance_s`` of ``now`` (constant-time comparison)."""
    try:
        timestamp = int(timestamp_header)
    except ValueError:
        return False
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance_s:
        return False
    return hmac.compare_digest(signature(secret, timestamp, body), signature_header)
