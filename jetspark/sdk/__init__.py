"""The Python SDK: build a DAG in the shape of Jet's Core API, check it with the server's own
rules, submit and follow it (``Client``).

Imports without pyspark. To run a DAG here, on a local SparkSession, with the workers' engine:
``worker.local_run.run_local`` (the core package never imports the worker).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jetspark.dag.errors import DagProblem, DagValidationError
from jetspark.dag.model import EdgeConfig, JobConfig
from jetspark.sdk.dag import DAG, Edge, Vertex

if TYPE_CHECKING:
    from jetspark.sdk.client import ApiError, Client, JobNotCompleted, Results

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
    "Results",
    "Vertex",
]

_LAZY = {
    "ApiError": "jetspark.sdk.client",
    "Client": "jetspark.sdk.client",
    "JobNotCompleted": "jetspark.sdk.client",
    "Results": "jetspark.sdk.client",
}


def __getattr__(name: str) -> Any:
    """The client (httpx, the generated client) loads on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
