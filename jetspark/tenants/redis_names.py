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
from jetspark.dag.kinds import PROCESSORS
from jetspark.dag.model import JobSpec
from jetspark.queue.keys import Keys


def check_user_names(spec: JobSpec, namespace: str) -> None:
    """Refuse (``DagValidationError``, pointing at each) names under ``<namespace>:`` or
    ``{<namespace>}:``."""
    problems = user_name_problems(spec, namespace)
    if problems:
        raise DagValidationError(problems)


def user_name_problems(spec: JobSpec, namespace: str) -> list[DagProblem]:
    """Each Redis name a vertex gives (``Resources.redis_names``) that spells out a server
    prefix."""
    prefixes = Keys(namespace).server_prefixes()
    problems: list[DagProblem] = []
    for i, vertex in enumerate(spec.dag.vertices):
        kind = PROCESSORS.get(vertex.processor)
        for param in kind.resources.redis_names if kind is not None else ():
            problems += _under_server_prefix(vertex.params.get(param), prefixes, i, param)
    return problems


def _under_server_prefix(
    value: Any, prefixes: tuple[str, ...], vertex: int, param: str
) -> list[DagProblem]:
    """A param's names (one, or a list of them) that spell out a server prefix."""
    is_list = isinstance(value, list)
    problems: list[DagProblem] = []
    for j, name in enumerate(value if is_list else [value]):
        prefix = next((p for p in prefixes if str(name).startswith(p)), None)
        if isinstance(name, str) and prefix is not None:
            pointer = f"/dag/vertices/{vertex}/params/{param}" + (f"/{j}" if is_list else "")
            problems.append(
                DagProblem(
                    pointer,
                    f"{name[:80]!r} is under the server's own prefix {prefix!r}: name a map "
                    "or stream of your own (jetspark keeps it under your principal's prefix)",
                )
            )
    return problems
