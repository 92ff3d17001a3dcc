"""What a snapshot depends on in a DAG, and whether another DAG can start from it."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from jetspark.dag.model import JobSpec
from jetspark.dag.validate import ValidatedDag


def dag_fingerprint(spec: JobSpec) -> str:
    """The DAG's identity: the same vertices, edges and params give the same fingerprint."""
    canonical = json.dumps(spec.dag.model_dump(mode="json", by_alias=True), sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def state_shape(dag: ValidatedDag, vertex: str) -> dict[str, Any]:
    """What a vertex's saved state depends on: its processor kind and params."""
    params = dag.params[vertex].model_dump(mode="json", by_alias=True)
    return {"processor": dag.vertices[vertex].processor, "params": params}


def incompatibilities(
    dag: ValidatedDag, offsets: dict[str, Any], stats: dict[str, Any]
) -> list[str]:
    """Why ``dag`` cannot start from a snapshot with these offsets and stats (empty: it can).

    Every vertex that saved state must be there with the same processor and params, and
    every source whose position was saved must still be a source of the same kind. The
    parallelism and the members may differ: keyed state goes to its new owners.
    """
    problems: list[str] = []
    for vertex, saved in sorted(stats.get("vertices", {}).items()):
        if vertex not in dag.vertices:
            problems.append(f"vertex {vertex!r} has state in the snapshot but is not in the DAG")
            continue
        shape = state_shape(dag, vertex)
        if shape["processor"] != saved.get("processor"):
            problems.append(
                f"vertex {vertex!r} was {saved.get('processor')!r} "
                f"and is {shape['processor']!r} now"
            )
        elif shape["params"] != saved.get("params"):
            changed = sorted(
                k
                for k in set(shape["params"]) | set(saved.get("params", {}))
                if shape["params"].get(k) != saved.get("params", {}).get(k)
            )
            problems.append(f"vertex {vertex!r} changed its state's params: {', '.join(changed)}")
    for source, kind in sorted(offsets.get("source_kinds", {}).items()):
        if source not in dag.vertices:
            problems.append(f"source {source!r} has a saved position but is not in the DAG")
        elif dag.vertices[source].processor != kind:
            problems.append(
                f"source {source!r} was {kind!r} and is {dag.vertices[source].processor!r} now"
            )
    return problems
