"""The committed generated client is what ``make client`` makes from the committed spec."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "clients" / "jetspark_client"
GENERATOR = Path(sys.executable).with_name("openapi-python-client")


def _tree(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): path.read_text()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_committed_client_matches_a_fresh_generation(tmp_path: Path) -> None:
    fresh = tmp_path / "jetspark_client"
    # The same command as `make client` (its flags and config), into a temporary directory.
    subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            str(ROOT / "openapi" / "openapi.json"),
            "--meta",
            "none",
            "--config",
            str(ROOT / "clients" / "openapi-python-client.yaml"),
            "--output-path",
            str(fresh),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    expected, committed = _tree(fresh), _tree(COMMITTED)
    assert sorted(committed) == sorted(expected), "files differ: run `make client`"
    changed = [name for name in expected if committed[name] != expected[name]]
    assert not changed, f"{changed} drifted from openapi/openapi.json: run `make client`"
