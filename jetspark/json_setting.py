"""A setting whose value is a JSON object (``JETSPARK_SPARK_CONF``, ``..._JDBC_CONNECTIONS``,
``..._KAFKA_CLUSTERS``): read, or refused in one line naming the setting."""

from __future__ import annotations

import json
from typing import Any


def json_object(text: str, source: str, what: str, error: type[Exception]) -> dict[str, Any]:
    """``text`` as a JSON object; ``error`` naming ``source`` when it is not JSON, or not an
    object (``what`` says what its entries are)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as refused:
        raise error(f"{source} is not valid JSON: {refused}") from None
    if not isinstance(value, dict):
        raise error(f"{source} must be a JSON object of {what}")
    return value
