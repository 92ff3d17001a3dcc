"""The package layers (docs/ARCHITECTURE.md), checked over the source's imports with ``ast``.

Every ``import`` counts, inside functions and under ``TYPE_CHECKING`` too: a lazy or
type-only import hides a circle from Python, not from the reader. Rules:

A string constant that names a project module counts as an import of it too (``"worker.main"``
for ``python -m worker.main``, ``"api.app:create_app"`` for uvicorn's factory): a program
started by name depends on that program as much as an import does.

- no import cycles between the modules of ``jetspark``, ``api``, ``worker`` and ``launcher``;
- the core package ``jetspark`` never imports ``api``, ``worker`` or ``launcher``; ``api`` and
  ``worker`` never import each other or ``launcher`` (the outer package composing them);
- the engine (``worker.engine``) never imports the outer worker (``worker`` outside it);
- the ops (``worker.engine.ops``) never import the walkers that call them;
- ``worker.engine.streaming`` never imports the ops: the ops may use what streaming offers
  (epoch scope, state store, watermarks), never the other way round.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("jetspark", "api", "worker", "launcher")

OUTER = {
    "jetspark": ("api", "worker", "launcher"),
    "api": ("worker", "launcher"),
    "worker": ("api", "launcher"),
    "worker.engine": ("worker",),
}
"""Who never imports whom: importer prefix -> prefixes it must not import (the importer's own
package excepted: ``worker.engine`` imports itself, never the rest of ``worker``)."""

WALKERS = ("worker.engine.runner", "worker.engine.execution", "worker.engine.epoch_loop")
OPS = "worker.engine.ops"
STREAMING = "worker.engine.streaming"

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
    module, else ``a``) or names in a string."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield from _named(node.value)
        elif isinstance(node, ast.Import):
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


def _named(text: str) -> Iterator[str]:
    """The project module a string names: a dotted module (``"worker.main"``), maybe with an
    attribute (``"api.app:create_app"``), or a package with one (``"launcher:app"``)."""
    name, colon, attribute = text.partition(":")
    if name in MODULES and ("." in name or (colon and attribute.isidentifier())):
        yield name


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


def test_inner_packages_never_import_outer_ones() -> None:
    wrong = []
    for module, imports in GRAPH.items():
        for inner, outer in OUTER.items():
            if not _under(module, inner):
                continue
            for name in imports:
                if any(_under(name, o) for o in outer) and not _under(name, inner):
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


def test_streaming_never_imports_the_ops() -> None:
    """``streaming`` sits under ``ops`` only: its epoch loop, which runs the ops, is a walker
    (``worker.engine.epoch_loop``) beside the batch runner."""
    wrong = [
        f"{module} -> {name}"
        for module, imports in GRAPH.items()
        if _under(module, STREAMING)
        for name in imports
        if _under(name, OPS) or any(_under(name, w) for w in WALKERS)
    ]
    assert not wrong, wrong


def test_the_check_sees_imports() -> None:
    """The graph is not empty by accident: the runner's imports are found, and so are
    modules named in strings."""
    assert "worker.engine.contract" in GRAPH["worker.engine.runner"]
    assert "jetspark.dag.model" in GRAPH["jetspark.dag.plan"]
    assert "worker.main" in GRAPH["launcher.worker_program"]
    assert "api.app" in GRAPH["launcher.servers"]
    assert sorted(_named("worker.main")) == ["worker.main"]
    assert sorted(_named("api.app:create_app")) == ["api.app"]
    assert not list(_named("api")), "a bare word is not a module's name"
    assert not list(_named("api.log")), "nor a file's"


WHOLE = ("clients", "tests")
"""Top-level packages that are one row of docs/ARCHITECTURE.md's package table as a whole: the
client's sub-packages are generated, the tests' follow the areas they test."""


def _table_packages() -> list[str]:
    """Every package the table must list: each top-level package of the repository (a directory
    with an ``__init__.py``) and each of its sub-packages, but those of ``WHOLE``."""
    top = [d for d in ROOT.iterdir() if d.is_dir() and (d / "__init__.py").is_file()]
    return sorted(
        f"{path.parent.relative_to(ROOT).as_posix()}/"
        for package in top
        for path in (
            package.rglob("__init__.py") if package.name not in WHOLE else [package / "__init__.py"]
        )
    )


def test_the_architecture_lists_every_package_and_nothing_else() -> None:
    """docs/ARCHITECTURE.md's package table has one row per package, both ways: every package
    (``_table_packages``) has a row, and every row names a directory that is one of them (no
    module, file, glob or directory without an ``__init__.py``), once, as its first cell's whole
    text."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    table = text.split("## Packages and who owns what", 1)[1].split("\n\n## ", 1)[0]
    cells = re.findall(r"^\|([^|]*)\|", table, re.MULTILINE)
    rows = [c.strip().removeprefix("`").removesuffix("`") for c in cells[2:]]
    assert cells[:2] == [" path ", " --- "], "the table starts with its header"
    packages = _table_packages()
    assert {"jetspark/", "worker/engine/ops/", "bench/", "clients/", "tests/"} <= set(packages)
    missing = [p for p in packages if p not in rows]
    assert not missing, f"not in docs/ARCHITECTURE.md's package table: {missing}"
    extra = [row for row in rows if row not in packages]
    assert not extra, f"rows of docs/ARCHITECTURE.md's package table that are no package: {extra}"
    twice = sorted({row for row in rows if rows.count(row) > 1})
    assert not twice, f"rows of docs/ARCHITECTURE.md's package table named twice: {twice}"
