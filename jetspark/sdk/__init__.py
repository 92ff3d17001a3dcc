"""The Python SDK: build a DAG in the shape of Jet's Core API, check it with the server's own
rules, submit and follow it (``Client``), or run it here (``run_local``).

Imports without pyspark; ``run_local`` loads the engine when it runs a DAG.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jetspark.dag.errors import DagProblem, DagValidationError
from jetspark.dag.model import EdgeConfig, JobConfig
from jetspark.sdk.dag import DAG, Edge, Vertex

if TYPE_CHECKING:
    from jetspark.sdk.client import ApiError, Client, JobNotCompleted, Results
    from jetspark.sdk.local import LocalRun, run_local

__all__ = [
    "DAG",
    "ApiError",
    "Client",
    "DagProblem",
    "DagValidationError",
    "Edge",
    "EdgeConfig",
    "JobConfig",
    "JobNotCompleted",
    "LocalRun",
    "Results",
    "Vertex",
    "run_local",
]

_LAZY = {
    "ApiError": "jetspark.sdk.client",
    "Client": "jetspark.sdk.client",
    "JobNotCompleted": "jetspark.sdk.client",
    "Results": "jetspark.sdk.client",
    "LocalRun": "jetspark.sdk.local",
    "run_local": "jetspark.sdk.local",
}


def __getattr__(name: str) -> Any:
    """The client (httpx, the generated client) and the local runner load on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
