"""Hostile file paths (issue 11): reads and writes only under the data roots, sinks only into
directories jetspark created for the job; refused at validation and again in the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jetspark.dag.data_paths import MARKER, PathRefused, check_path, prepare_sink
from jetspark.dag.errors import DagValidationError
from jetspark.dag.model import JobSpec
from jetspark.dag.validate import validate_job
from tests.engine.conftest import RunDag, job_body
from worker.engine.runner import VertexFailed


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The only data root of the test: a directory of its own."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("JETSPARK_DATA_ROOTS", str(data))
    monkeypatch.delenv("JETSPARK_DATA_SCHEMES", raising=False)
    return data


def _read(path: str) -> dict[str, Any]:
    return job_body(
        [
            {"name": "src", "processor": "source.files", "params": {"path": path}},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "src", "to": "out"}],
    )  # fmt: skip


def _write(path: str) -> dict[str, Any]:
    return job_body(
        [
            {"name": "seq", "processor": "source.sequence", "params": {"count": 3}},
            {"name": "files", "processor": "sink.files", "params": {"path": path}},
        ],
        [{"from": "seq", "to": "files"}],
    )  # fmt: skip


def _refusal(body: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(DagValidationError) as refused:
        validate_job(JobSpec.model_validate(body))
    problem = refused.value.problems[0]
    return problem.pointer, problem.message


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "file:///etc/passwd",
        "file:/etc",
        "hdfs://internal:8020/",
        "s3a://bucket/key",
        "relative/path",
    ],
)
def test_paths_outside_the_roots_are_refused_naming_the_pointer(root: Path, path: str) -> None:
    for body, vertex in ((_read(path), 0), (_write(path), 1)):
        pointer, message = _refusal(body)
        assert pointer == f"/dag/vertices/{vertex}/params/path"
        assert repr(path) in message


def test_dot_dot_glob_and_symlink_escapes_are_refused(root: Path) -> None:
    (root / "link").symlink_to("/etc")
    for path in (f"{root}/../../../etc/passwd", f"{root}/*", f"{root}/link/passwd", f"{root}/link"):
        pointer, _ = _refusal(_read(path))
        assert pointer == "/dag/vertices/0/params/path"


def test_another_scheme_needs_the_operator_to_list_it_with_a_root(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JETSPARK_DATA_SCHEMES", "file,s3a")
    monkeypatch.setenv("JETSPARK_DATA_ROOTS", f"{root},s3a://lake/jobs")
    assert check_path("s3a://lake/jobs/in").location == "s3a://lake/jobs/in"
    for refused in ("s3a://lake/other", "s3a://lake/jobs/../other", "hdfs://internal:8020/x"):
        with pytest.raises(PathRefused):
            check_path(refused)


def test_a_sink_never_touches_a_directory_it_did_not_create(root: Path) -> None:
    foreign = root / "precious"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    with pytest.raises(PathRefused, match="not created by this job"):
        prepare_sink(check_path(str(foreign)), "job-a")
    assert (foreign / "keep.txt").read_text() == "mine"
    prepare_sink(check_path(str(root / "new")), "job-a")
    assert (root / "new" / MARKER).read_text() == "job-a"
    with pytest.raises(PathRefused):
        prepare_sink(check_path(str(root / "new")), "job-b")


@pytest.mark.spark
def test_the_engine_reads_under_the_root_but_not_a_symlink_out_of_it(
    root: Path, run_dag: RunDag
) -> None:
    inside = root / "in"
    inside.mkdir()
    (inside / "a.txt").write_text("hello\n")
    outcome, _ = run_dag(_read(str(inside)))
    assert outcome.results["out"] == [{"line": "hello"}]
    (inside / "b.txt").symlink_to("/etc/passwd")  # planted after validation
    with pytest.raises(VertexFailed, match="not under a data root"):
        run_dag(_read(str(inside)))


@pytest.mark.spark
def test_the_engine_sink_refuses_a_foreign_directory_and_keeps_it(
    root: Path, run_dag: RunDag
) -> None:
    target = root / "out"
    written, _ = run_dag(_write(str(target)))
    assert written.vertex_counts["files"].items_in == 3
    rows = [json.loads(line) for f in target.glob("part-*") for line in f.read_text().splitlines()]
    assert sorted(r["seq"] for r in rows) == [0, 1, 2]
    foreign = root / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    with pytest.raises(VertexFailed, match="not created by this job"):
        run_dag(_write(str(foreign)))
    assert (foreign / "keep.txt").read_text() == "mine"
    with pytest.raises(VertexFailed, match="not created by this job"):
        run_dag(_write(str(target)))  # another job's directory
