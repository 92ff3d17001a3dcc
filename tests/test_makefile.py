"""``make bench`` does what the README says: it runs every benchmark under bench/, and each
bench target is in the README's table."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAKEFILE = (ROOT / "Makefile").read_text()


def _benches() -> list[str]:
    found = re.search(r"^BENCHES := ((?:.*\\\n)*.*)$", MAKEFILE, re.MULTILINE)
    assert found, "the Makefile lists BENCHES"
    return found.group(1).replace("\\\n", " ").split()


def _recipe(target: str) -> str:
    found = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)+)", MAKEFILE, re.MULTILINE)
    assert found, f"no recipe for {target}"
    return found.group(1)


def test_make_bench_runs_every_benchmark() -> None:
    assert re.search(r"^bench: \$\(BENCHES\)$", MAKEFILE, re.MULTILINE)
    run = {
        module
        for target in _benches()
        for module in re.findall(r"-m bench\.(\w+)", _recipe(target))
    }
    # A bench runs (``python -m bench.x``); its helpers (the bare app, processes, wrk) do not.
    modules = {
        path.stem
        for path in (ROOT / "bench").glob("*.py")
        if '__name__ == "__main__"' in path.read_text()
    }
    assert modules == run, f"not run by make bench: {modules - run}; unknown: {run - modules}"


def test_the_readme_tells_every_bench_target() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = [t for t in ["bench", *_benches()] if f"| `make {t}` |" not in readme]
    assert not missing, missing
