"""A hypothesis strategy for DAG bodies, shared by the tests that draw them.

Bodies from a small vocabulary: chains of built-ins over one integer field, every routing,
keys and partitioners present or not, windows with any of their params, batch and stream
config. About half are tidy (each edge's key and partitioner as its routing wants them,
each window's params as its type wants them, stream config only on a stream): mostly
accepted; the rest draw every field at random: mostly refused at submission (a unicast edge
with a key, a window without its size, ...). ``tests/engine/test_accepted_runs.py`` runs
what is accepted; ``tests/api/test_accept_path.py`` sends them, broken further, to every
door of the accept path.
"""

from __future__ import annotations

import copy
from itertools import pairwise
from typing import Any

from hypothesis import strategies as st

STEPS: dict[str, tuple[str, dict[str, Any]]] = {
    "map": ("map", {"select": {"x": "x + 1"}}),
    "filter": ("filter", {"where": "x % 3 <> 1"}),
    "flat_map": ("flat_map", {"explode": "array(x, x * 10)", "as": "x"}),
    "sort": ("sort", {"by": "x"}),
}

routings = st.sampled_from(["unicast", "broadcast", "partitioned", "all_to_one"])
keys = st.sampled_from([None, "x"])
partitioners = st.sampled_from([None, "murmur3", "spark_hash", "python:nowhere:at_all"])
WINDOW_PARAMS = {
    "tumbling": ("size_ms",),
    "sliding": ("size_ms", "slide_ms"),
    "session": ("gap_ms",),
}
"""The params each window type takes, when the body is tidy."""
OUTPUT_COLUMN = {"aggregate": "key", "window": "window_start"}
"""A column of what these senders emit (``x`` is gone), for a tidy edge's key. An untidy
edge may key by ``x`` after them: accepted, and failing at run time (an accept-path gap
this strategy found; left to its issue)."""
window_ms = st.one_of(st.none(), st.integers(min_value=1, max_value=500))


@st.composite
def _window(draw: st.DrawFn, tidy: bool) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(WINDOW_PARAMS)))
    window: dict[str, Any] = {"timestamp": "x", "type": kind, "aggregations": {"n": "count(*)"}}
    if tidy:  # a slide shorter than the size
        lengths = sorted(draw(st.sets(st.integers(1, 500), min_size=2)), reverse=True)
        window.update(zip(WINDOW_PARAMS[kind], lengths, strict=False))
        return window
    for field in ("size_ms", "slide_ms", "gap_ms"):
        value = draw(window_ms)
        if value is not None:
            window[field] = value
    return window


@st.composite
def _edge(draw: st.DrawFn, sender: dict[str, Any], receiver: str, tidy: bool) -> dict[str, Any]:
    edge: dict[str, Any] = {"from": sender["name"], "to": receiver, "routing": draw(routings)}
    keyed = edge["routing"] == "partitioned"
    key = (OUTPUT_COLUMN.get(sender["processor"], "x") if keyed else None) if tidy else draw(keys)
    if key is not None:
        edge["key"] = key
    partitioner = draw(partitioners)
    if tidy and (not keyed or partitioner == "python:nowhere:at_all"):
        partitioner = None
    if partitioner is not None:
        edge["partitioner"] = partitioner
    edge["distributed"] = draw(st.booleans())
    return edge


@st.composite
def bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A job body: a chain from ``source.items`` to ``sink.results``, tidy or not."""
    tidy = draw(st.booleans())
    # At least one item: an empty ``source.items`` has no fields to type its frame with, so
    # an expression downstream fails at run time (found by the engine's property; left to
    # its issue).
    items = [{"x": i} for i in range(draw(st.integers(min_value=1, max_value=12)))]
    vertices: list[dict[str, Any]] = [
        {"name": "v0", "processor": "source.items", "params": {"items": items}}
    ]
    for step in draw(st.lists(st.sampled_from(sorted(STEPS)), max_size=3)):
        processor, params = STEPS[step]
        vertex = {"name": f"v{len(vertices)}", "processor": processor, "params": params}
        vertices.append(copy.deepcopy(vertex))  # each body its own params, to break at will
    end = draw(st.sampled_from(["aggregate", "window", "none"]))
    if end == "aggregate":
        aggregate = {"key": "x % 2", "aggregations": {"n": "count(*)"}}
        vertices.append(
            {"name": f"v{len(vertices)}", "processor": "aggregate", "params": aggregate}
        )
    elif end == "window":
        vertices.append({"name": f"v{len(vertices)}", "processor": "insert_watermarks",
                         "params": {"timestamp": "x"}})  # fmt: skip
        window = draw(_window(tidy))
        vertices.append({"name": f"v{len(vertices)}", "processor": "window", "params": window})
    vertices.append({"name": "out", "processor": "sink.results"})
    edges = [draw(_edge(a, b["name"], tidy)) for a, b in pairwise(vertices)]
    config: dict[str, Any] = {"members": 1, "local_parallelism": draw(st.integers(1, 2))}
    if not tidy or end == "window":  # a batch job takes no stream config
        config["processing_guarantee"] = draw(st.sampled_from(["none", "at_least_once"]))
        if draw(st.booleans()):
            config["epoch_interval_ms"] = 50
    return {"name": "prop", "dag": {"vertices": vertices, "edges": edges}, "config": config}
