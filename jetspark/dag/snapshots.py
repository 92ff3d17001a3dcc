"""What a snapshot depends on in a DAG, and whether another DAG can start from it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jetspark.dag.field_types import DagFields, kind, spark_kind
from jetspark.dag.kinds import PROCESSORS
from jetspark.dag.model import Routing
from jetspark.dag.plan import ExecutionPlan

KEYED = (Routing.partitioned, Routing.all_to_one)
"""Routings whose receiver keeps state per key partition (all-to-one: one drawn partition)."""


def _state_keys(processor: str) -> Mapping[str, int]:
    """The params naming a kind's state's keys (``ProcessorKind.state_keys``)."""
    registered = PROCESSORS.get(processor)
    return registered.state_keys if registered is not None else {}


EDGE_FIELDS = ("routing", "key", "partitioner", "distributed")
"""What of an inbound edge decides which processor, and which partition, a key goes to."""
KEY_COLUMN = "__key"
"""The key column of an ``aggregate``'s or ``window``'s saved state (older snapshots' only
record of their key's type)."""


def state_shape(
    plan: ExecutionPlan, vertex: str, fields: DagFields | None = None
) -> dict[str, Any]:
    """What a vertex's saved state depends on: its processor kind and params, its inbound
    edges' routing (by ordinal) and the kinds of the keys its state and partitions are
    computed from (``field_types``; None where the DAG cannot tell). Computed from the plan
    alike by the worker that records it and by the API that checks a DAG against it."""
    fields = fields or DagFields(plan)
    planned = fields.vertices[vertex]
    params = planned.params.model_dump(mode="json", by_alias=True)
    inbound = sorted(fields.inbound.get(vertex, {}).items())
    key_types: dict[str, str | None] = {
        name: kind(params[name], fields.input(vertex, ordinal))
        for name, ordinal in _state_keys(planned.processor).items()
        if params.get(name) is not None
    }
    for ordinal, edge in inbound:
        if edge.routing in KEYED and edge.key is not None:
            key_types[f"edge {ordinal} key"] = kind(edge.key, fields.output(edge.source))
    return {
        "processor": planned.processor,
        "params": params,
        "inbound": {
            str(ordinal): edge.model_dump(mode="json", include=set(EDGE_FIELDS))
            for ordinal, edge in inbound
        },
        "key_types": key_types,
    }


def incompatibilities(
    plan: ExecutionPlan,
    offsets: dict[str, Any],
    stats: dict[str, Any],
    *,
    written_by: ExecutionPlan | None = None,
) -> list[str]:
    """Why the planned DAG cannot start from a snapshot with these offsets and stats
    (empty: it can).

    Keyed state is stored by the partition of its key, so the partition count must be the
    same; every vertex that saved state must be there with the same processor, params and
    state keys, its inbound edges routed the same way (routing, key, partitioner,
    distributed), and its keys of the same kind; every source whose position was saved must
    still be a source of the same kind. The parallelism and the members may differ: keyed
    state goes to its new owners. A snapshot older than the edges and kinds it now records
    has them from ``written_by``, the plan of the job that wrote it, if that is still kept
    (else its state schema's key is all there is to compare).
    """
    problems: list[str] = []
    saved_count = stats.get("partition_count")
    count = plan.partition_count
    if stats.get("vertices") and saved_count is not None and int(saved_count) != count:
        problems.append(
            f"partition_count is {count} but the snapshot's state is partitioned by "
            f"{saved_count}: its keyed state would land on processors that do not own its keys"
        )
    fields = DagFields(plan)
    old_fields = None if written_by is None else DagFields(written_by)
    for vertex, saved in sorted(stats.get("vertices", {}).items()):
        if vertex not in fields.vertices:
            problems.append(f"vertex {vertex!r} has state in the snapshot but is not in the DAG")
            continue
        recorded = _recorded(vertex, saved, old_fields)
        problems += _vertex_problems(vertex, recorded, state_shape(plan, vertex, fields))
    for source, kind_ in sorted(offsets.get("source_kinds", {}).items()):
        if source not in fields.vertices:
            problems.append(f"source {source!r} has a saved position but is not in the DAG")
        elif fields.vertices[source].processor != kind_:
            problems.append(
                f"source {source!r} was {kind_!r} and is {fields.vertices[source].processor!r} now"
            )
    return problems


def _recorded(vertex: str, saved: dict[str, Any], written_by: DagFields | None) -> dict[str, Any]:
    """The shape the snapshot recorded for ``vertex``, what an older one lacks filled in from
    the plan of the job that wrote it, or from its state schema's key."""
    if "inbound" in saved:
        return saved
    if written_by is not None and vertex in written_by.vertices:
        derived = state_shape(written_by.plan, vertex, written_by)
        return {**derived, "processor": saved.get("processor"), "params": saved.get("params")}
    key_types: dict[str, str | None] = {}
    if saved.get("processor") in ("aggregate", "window") and "schema" in saved:
        schema = json.loads(saved["schema"])
        found = [f["type"] for f in schema.get("fields", []) if f.get("name") == KEY_COLUMN]
        if found:
            key_types["key"] = spark_kind(found[0])
    return {**saved, "key_types": key_types}


def _vertex_problems(vertex: str, saved: dict[str, Any], now: dict[str, Any]) -> list[str]:
    name = f"vertex {vertex!r}"
    if now["processor"] != saved.get("processor"):
        return [f"{name} was {saved.get('processor')!r} and is {now['processor']!r} now"]
    problems: list[str] = []
    old_params: dict[str, Any] = saved.get("params") or {}
    keys = _state_keys(now["processor"])
    for key in keys:
        if old_params.get(key) != now["params"].get(key):
            problems.append(
                f"{name} changed its state key (params.{key}): {old_params.get(key)!r} -> "
                f"{now['params'].get(key)!r}"
            )
    changed = sorted(
        k
        for k in set(now["params"]) | set(old_params)
        if k not in keys and now["params"].get(k) != old_params.get(k)
    )
    if changed:
        problems.append(f"{name} changed its state's params: {', '.join(changed)}")
    if "inbound" in saved:
        problems += _edge_problems(name, saved["inbound"], now["inbound"])
    old_types: dict[str, str | None] = saved.get("key_types") or {}
    for label, was in sorted(old_types.items()):
        is_ = now["key_types"].get(label)
        if was is not None and is_ is not None and was != is_:
            problems.append(
                f"{name}: its {label} was of kind {was} and is of kind {is_} now (a key's "
                "partition depends on its type: SPEC §4)"
            )
    return problems


def _edge_problems(name: str, saved: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """Inbound edges that place state otherwise: keyed ones, and the first (a restore
    places state by the first edge's routing)."""
    problems: list[str] = []
    for ordinal in sorted(set(saved) | set(now), key=int):
        was, is_ = saved.get(ordinal), now.get(ordinal)
        keyed = any(e is not None and e.get("routing") in KEYED for e in (was, is_))
        if not keyed and ordinal != "0":
            continue
        if was is None or is_ is None:
            state = "new" if was is None else "gone"
            problems.append(f"{name}: its inbound edge {ordinal} is {state}")
            continue
        if not keyed:
            continue
        for field in EDGE_FIELDS:
            if was.get(field) != is_.get(field):
                problems.append(
                    f"{name}: its inbound edge {ordinal} changed its {field}: "
                    f"{was.get(field)!r} -> {is_.get(field)!r}"
                )
    return problems
