"""Recover a processor failure (vertex, error type, message) from a Spark exception."""

from __future__ import annotations

import json
import re

from jetspark.processor.runtime.tasklet import FAILURE_MARKER


class RemoteProcessorError(Exception):
    """A processor's exception as seen in the driver: its original type name and message."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type


_FACTS = re.compile(re.escape(FAILURE_MARKER) + r" (\{.*\})")


def processor_failure(error: BaseException) -> tuple[str, RemoteProcessorError] | None:
    """``(vertex, error)`` when ``error`` (or its text) carries a processor failure."""
    match = _FACTS.search(str(error))
    if match is None:
        return None
    try:
        facts = json.loads(match.group(1))
    except json.JSONDecodeError:
        return None
    return str(facts["vertex"]), RemoteProcessorError(str(facts["type"]), str(facts["message"]))
