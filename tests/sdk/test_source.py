"""``python_source``: the SDK script the page shows rebuilds the same job, hostile names and
keys included (written as literals, never run as code)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jetspark.sdk import DAG, Edge
from jetspark.sdk.source import python_source

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.json"))


def rebuilt(dag: DAG) -> dict[str, Any]:
    scope: dict[str, Any] = {"__name__": "snippet"}
    exec(compile(python_source(dag), "<sdk>", "exec"), scope)
    built = scope["dag"]
    assert isinstance(built, DAG)
    return built.to_json()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_example_comes_back_the_same(example: Path) -> None:
    dag = DAG.from_json(json.loads(example.read_text()))
    assert rebuilt(dag) == dag.to_json()


def test_hostile_names_and_every_edge_option_come_back_as_data() -> None:
    hostile = '"); import os; os.environ["PWNED"] = "1"; ("'
    dag = DAG("x\n'''\"\"\"", {"members": 2, "processing_guarantee": "exactly_once"})
    a = dag.new_vertex(hostile, "source.items", items=[{"a b": 1.5, "c": None, "d": [True]}])
    b = dag.new_vertex("class", "flat_map", explode="split(x, ' ')", **{"as": "w", "a-b": 1})
    c = dag.new_vertex("dag", "sink.results").local_parallelism(3)
    d = dag.new_vertex("v0", "sink.logger")
    dag.edge(Edge.from_(a, 0).to(b, 1).partitioned("w", "spark_hash").distributed())
    dag.edge(Edge.between(b, c).broadcast().priority(-1).buffered().set_config(queue_size=64))
    dag.edge(Edge.between(a, d).all_to_one())
    source = python_source(dag)
    assert "import os" not in source.replace(repr(hostile), "")
    assert rebuilt(dag) == dag.to_json()
    assert "PWNED" not in __import__("os").environ
