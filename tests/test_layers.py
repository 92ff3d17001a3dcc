"""The package layers (docs/ARCHITECTURE.md), checked over the source's imports with ``ast``.

Every ``import`` counts, inside functions and under ``TYPE_CHECKING`` too: a lazy or
type-only import hides a circle from Python, not from the reader. Rules:

- no import cycles between the modules of ``jetspark``, ``api`` and ``worker``;
- the core package ``jetspark`` never imports ``api`` or ``worker`` (one exception:
  ``jetspark.sdk`` may run a job locally through ``worker.engine``);
- the ops (``worker.engine.ops``) never import the walkers that call them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("jetspark", "api", "worker")

CORE_MAY_IMPORT = {"jetspark.sdk": ("worker.engine",)}
"""The documented exceptions to "the core never imports ``api``/``worker``": importer prefix
-> imported prefixes."""

WALKERS = ("worker.engine.runner", "worker.engine.execution", "worker.engine.streaming.loop")
OPS = "worker.engine.ops"

KNOWN_CYCLES: list[frozenset[str]] = []
"""Cycles still to break (issue 13); the list only shrinks."""


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path) -> Iterator[str]:
    """The project modules ``module`` imports (``from a import b`` names ``a.b`` when it is a
    module, else ``a``)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _known(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield from _known(full if full in MODULES else base)


def _known(name: str) -> Iterator[str]:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    if name:
        yield name


GRAPH = {m: sorted(set(_imported(m, p)) - {m}) for m, p in MODULES.items()}


def _cycles() -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(GRAPH):
        if root in index:
            continue
        work = [(root, iter(GRAPH[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(GRAPH[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def test_no_import_cycles() -> None:
    cycles = _cycles()
    new = [sorted(c) for c in cycles if c not in KNOWN_CYCLES]
    assert not new, f"import cycles: {new}"
    fixed = [sorted(c) for c in KNOWN_CYCLES if c not in cycles]
    assert not fixed, f"no longer cycles, drop them from KNOWN_CYCLES: {fixed}"


def test_core_never_imports_api_or_worker() -> None:
    wrong = []
    for module, imports in GRAPH.items():
        if not _under(module, "jetspark"):
            continue
        allowed = next((v for k, v in CORE_MAY_IMPORT.items() if _under(module, k)), ())
        for name in imports:
            outside = _under(name, "api") or _under(name, "worker")
            if outside and not any(_under(name, a) for a in allowed):
                wrong.append(f"{module} -> {name}")
    assert not wrong, wrong


def test_ops_never_import_the_walkers() -> None:
    wrong = [
        f"{module} -> {name}"
        for module, imports in GRAPH.items()
        if _under(module, OPS)
        for name in imports
        if any(_under(name, w) for w in WALKERS)
    ]
    assert not wrong, wrong


def test_the_check_sees_imports() -> None:
    """The graph is not empty by accident: the runner's imports are found."""
    assert "worker.engine.contract" in GRAPH["worker.engine.runner"]
    assert "jetspark.dag.model" in GRAPH["jetspark.dag.plan"]
