"""``source.files`` gives each processor whole file splits: as many splits as processors are
read where Spark put them (no ``coalesce``, which would break Spark's code generation between
the read and what follows), more are coalesced, fewer are spread round-robin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from tests.engine.conftest import RunDag, job_body
from worker.engine.ops.sources import FilesSourceOp

pytestmark = pytest.mark.spark

FILES = 4
LINES_PER_FILE = 25


@pytest.fixture
def lines(tmp_path: Path) -> Path:
    folder = tmp_path / "lines"
    folder.mkdir()
    for f in range(FILES):
        text = "".join(f"{f}-{i}\n" for i in range(LINES_PER_FILE))
        (folder / f"part-{f}.txt").write_text(text)
    return folder


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[DataFrame]:
    """The frames ``source.files`` hands on."""
    seen: list[DataFrame] = []
    original = FilesSourceOp.read

    def noted(self: FilesSourceOp, *args: Any, **kw: Any) -> DataFrame:
        frame = original(self, *args, **kw)
        seen.append(frame)
        return frame

    monkeypatch.setattr(FilesSourceOp, "read", noted)
    return seen


def read_all(path: Path, processors: int) -> dict[str, Any]:
    return job_body(
        [
            {"name": "src", "processor": "source.files", "local_parallelism": processors,
             "params": {"path": str(path), "format": "text"}},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "src", "to": "out"}],
        members=1,
    )  # fmt: skip


def test_as_many_splits_as_processors_are_read_where_spark_put_them(
    spark: SparkSession, run_dag: RunDag, lines: Path, reads: list[DataFrame]
) -> None:
    splits = spark.read.text(str(lines)).rdd.getNumPartitions()
    for processors in sorted({splits, max(1, splits - 1), splits + 1}):
        reads.clear()
        outcome, _ = run_dag(read_all(lines, processors))
        assert len(outcome.results["out"]) == FILES * LINES_PER_FILE
        assert outcome.vertex_counts["src"].items_out == FILES * LINES_PER_FILE
        (frame,) = reads
        plan = frame._jdf.queryExecution().executedPlan().toString()
        assert frame.rdd.getNumPartitions() == processors
        assert ("Coalesce" in plan) == (splits > processors), (processors, splits, plan)
