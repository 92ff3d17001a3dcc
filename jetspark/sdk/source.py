"""``python_source(dag)``: the SDK script that builds ``dag`` again (the page shows it).

Names and values are written as Python literals (``repr``), never pasted as code: a vertex
named ``"); import os; ("`` stays a string. Vertex variables are the vertex names where
those are plain identifiers, else ``v<n>``.
"""

from __future__ import annotations

import keyword
from typing import Any

from jetspark.dag.model import EdgeSpec, Routing
from jetspark.sdk.dag import DAG

_TAKEN = frozenset({"dag", "DAG", "Edge", "annotations"})


def python_source(dag: DAG) -> str:
    """A script that rebuilds ``dag``: its ``to_json()`` equals this one's."""
    variables = _variables([v.name for v in dag.vertices])
    config = dag.config.model_dump(mode="json", exclude_defaults=True)
    lines = [
        "from jetspark.sdk import DAG, Edge",
        "",
        f"dag = DAG({dag.name!r}{f', {config!r}' if config else ''})",
    ]
    for vertex in dag.vertices:
        args = [repr(vertex.name), repr(vertex.processor), *_keywords(vertex.params)]
        call = f"{variables[vertex.name]} = dag.new_vertex({', '.join(args)})"
        if vertex.spec.local_parallelism is not None:
            call += f".local_parallelism({vertex.spec.local_parallelism})"
        lines.append(call)
    for edge in dag.edges:
        lines.append(f"dag.edge({_edge(edge.spec, variables)})")
    return "\n".join([*lines, *_MAIN])


_MAIN = [
    "",
    'if __name__ == "__main__":',
    "    from launcher.script import main",
    "",
    "    main(dag)  # prints the body; --local runs it here, --submit sends it to JETSPARK_URL",
    "",
]


def _variables(names: list[str]) -> dict[str, str]:
    chosen: dict[str, str] = {}
    used = set(_TAKEN)
    for i, name in enumerate(names):
        variable = name if _plain(name) and name not in used else f"v{i}"
        while variable in used:
            variable += "_"
        used.add(variable)
        chosen[name] = variable
    return chosen


def _plain(name: str) -> bool:
    """A name Python takes as a variable or a keyword argument."""
    return name.isidentifier() and name.isascii() and not keyword.iskeyword(name)


def _keywords(params: dict[str, Any]) -> list[str]:
    plain = {k: v for k, v in params.items() if _plain(k)}
    rest = {k: v for k, v in params.items() if k not in plain}
    return [f"{k}={v!r}" for k, v in plain.items()] + ([f"**{rest!r}"] if rest else [])


def _edge(edge: EdgeSpec, variables: dict[str, str]) -> str:
    source, target = variables[edge.source], variables[edge.to]
    if edge.from_ordinal or edge.to_ordinal:
        text = f"Edge.from_({source}, {edge.from_ordinal}).to({target}, {edge.to_ordinal})"
    else:
        text = f"Edge.between({source}, {target})"
    if edge.routing == Routing.partitioned:
        default = EdgeSpec.model_fields["partitioner"].default
        more = f", {edge.partitioner!r}" if edge.partitioner != default else ""
        text += f".partitioned({edge.key!r}{more})"
    elif edge.routing != Routing.unicast:
        text += f".{edge.routing.value}()"
    if edge.distributed:
        text += ".distributed()"
    if edge.priority:
        text += f".priority({edge.priority})"
    if edge.buffered:
        text += ".buffered()"
    config = edge.config.model_dump(mode="json", exclude_defaults=True)
    if config:
        text += f".set_config(**{config!r})"
    return text
