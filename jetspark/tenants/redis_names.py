"""Names of Redis maps and streams a DAG's vertices give: the user's, never the server's.

The worker puts every such name under the job's principal's prefix
(``Keys.user_prefix``), so whatever the name, it cannot reach the server's own keys (the
job queue, heartbeats, job event streams, the reconciler's lock) or another principal's maps
and streams. A name that spells out the server's own prefix is refused at validation all the
same: it shows the submitter meant a key the server keeps for itself.
"""

from __future__ import annotations

from typing import Any

from jetspark.dag.errors import DagProblem, DagValidationError
from jetspark.dag.model import JobSpec
from jetspark.queue.keys import Keys

NAMED_PARAMS: dict[str, tuple[str, bool]] = {
    "sink.redis_map": ("map", False),
    "sink.redis_stream": ("stream", False),
    "source.redis_stream": ("streams", True),
}
"""Processor kind → its param holding Redis names, and whether it is a list of them."""


def check_user_names(spec: JobSpec, namespace: str) -> None:
    """Refuse (``DagValidationError``, pointing at each) names under ``<namespace>:`` or
    ``{<namespace>}:``."""
    prefixes = Keys(namespace).server_prefixes()
    problems: list[DagProblem] = []
    for i, vertex in enumerate(spec.dag.vertices):
        named = NAMED_PARAMS.get(vertex.processor)
        if named is None:
            continue
        param, is_list = named
        value: Any = vertex.params.get(param)
        values = (value if isinstance(value, list) else []) if is_list else [value]
        for j, name in enumerate(values):
            prefix = next((p for p in prefixes if str(name).startswith(p)), None)
            if isinstance(name, str) and prefix is not None:
                pointer = f"/dag/vertices/{i}/params/{param}" + (f"/{j}" if is_list else "")
                problems.append(
                    DagProblem(
                        pointer,
                        f"{name[:80]!r} is under the server's own prefix {prefix!r}: name a map "
                        "or stream of your own (jetspark keeps it under your principal's prefix)",
                    )
                )
    if problems:
        raise DagValidationError(problems)
