"""Engine benchmark: word count with the Python ``Tokenizer`` processor vs hand-written code.

Run: ``.venv/bin/python -m bench.python_processors [--words 10000000]``. One SparkSession
(local[2]), one parquet file of lines (10 words each, 100k distinct words), read the same way
by every contestant, in ``--repeats`` rounds (each contestant once per round), best of them:

- ``processor``: the ``python`` op (``PythonOp``) running
  ``jetspark.example_processors.words:Tokenizer`` (Jet item semantics: per-line
  ``try_process0``, outbox bucket of 2048, inbox batches of 1024)
  on the lines → ``groupBy(word).count()``;
- ``hand-written``: ``mapInArrow`` with a plain Python loop doing the same split → groupBy;
- ``hand-written (pyarrow.compute)``: the same with Arrow kernels, no Python per row;
- ``full job``: for information, the whole DAG through ``worker.engine.run_job`` (source.files
  → Tokenizer → partitioned edge with SPEC §4 murmur3 routing → built-in aggregate → sink),
  which adds the exact-routing shuffle.

Prints words/s and the ratio processor / hand-written (target ≥ 0.8).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from jetspark.spark_session import build_spark_session
from worker.engine import JobControl, run_job
from worker.engine.ops.base import OpContext
from worker.engine.ops.python import PythonOp

PARALLELISM = 2


def write_lines(spark: SparkSession, path: Path, words: int, per_line: int, vocab: int) -> None:
    lines = words // per_line
    columns = [
        F.concat(F.lit("w"), F.pmod(F.hash(F.col("id"), F.lit(j)), F.lit(vocab)).cast("string"))
        for j in range(per_line)
    ]
    frame = spark.range(lines, numPartitions=PARALLELISM).select(F.concat_ws(" ", *columns))
    frame.toDF("value").write.mode("overwrite").text(str(path))


def word_count_spec(path: Path) -> JobSpec:
    return JobSpec.model_validate(
        {
            "name": "bench-python-tokenizer",
            "dag": {
                "vertices": [
                    {"name": "lines", "processor": "source.files",
                     "params": {"path": str(path), "format": "text"}},
                    {"name": "tokenize", "processor": "python",
                     "params": {"class": "jetspark.example_processors.words:Tokenizer"}},
                    {"name": "count", "processor": "aggregate",
                     "params": {"key": "word", "aggregations": {"n": "count(*)"}}},
                    {"name": "sink", "processor": "sink.logger"},
                ],
                "edges": [
                    {"from": "lines", "to": "tokenize"},
                    {"from": "tokenize", "to": "count", "routing": "partitioned", "key": "word"},
                    {"from": "count", "to": "sink"},
                ],
            },
            "config": {"members": 1, "local_parallelism": PARALLELISM},
        }
    )  # fmt: skip


def full_job(spark: SparkSession, path: Path) -> int:
    spec = word_count_spec(path)
    plan = build_plan(validate_job(spec))
    outcome = run_job(spark, plan, JobControl(job_group="bench"))
    return outcome.vertex_counts["sink"].items_in


def processor_op(spark: SparkSession, path: Path) -> int:
    dag = validate_job(word_count_spec(path))
    plan = build_plan(dag)
    lines = spark.read.text(str(path)).repartition(PARALLELISM).withColumnRenamed("value", "line")
    context = OpContext(
        spark=spark,
        vertex=plan.vertex("tokenize"),
        params=dag.params["tokenize"],
        inputs=[lines],
        results_cap=0,
        inbound=plan.inbound("tokenize"),
        senders=[plan.vertex(e.source) for e in plan.inbound("tokenize")],
        partition_count=plan.partition_count,
        outbound=plan.outbound("tokenize"),
        allowed_modules=("jetspark.example_processors",),
    )
    words = PythonOp().apply(context)
    return words.groupBy("word").count().count()


def split_in_python(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        words: list[str] = []
        for line in batch.column(0).to_pylist():
            if line:
                words.extend(line.lower().split())
        yield pa.RecordBatch.from_arrays([pa.array(words, pa.string())], names=["word"])


def split_in_arrow(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        lists = pc.utf8_split_whitespace(pc.utf8_lower(batch.column(0)))
        words = pc.list_flatten(lists)
        yield pa.RecordBatch.from_arrays([words], names=["word"])


def hand_written(
    split: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]],
) -> Callable[[SparkSession, Path], int]:
    def run(spark: SparkSession, path: Path) -> int:
        lines: DataFrame = spark.read.text(str(path)).repartition(PARALLELISM)
        words = lines.mapInArrow(split, "word string")
        return words.groupBy("word").count().count()

    return run


def timed(run: Callable[[], int]) -> tuple[float, int]:
    started = time.perf_counter()
    keys = run()
    return time.perf_counter() - started, keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--words", type=int, default=10_000_000)
    parser.add_argument("--per-line", type=int, default=10)
    parser.add_argument("--vocab", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    with tempfile.TemporaryDirectory() as home:
        spark = build_spark_session(master="local[2]", warehouse=Path(home) / "warehouse")
        path = Path(home) / "lines"
        write_lines(spark, path, options.words, options.per_line, options.vocab)
        contestants = {
            "processor": processor_op,
            "hand-written": hand_written(split_in_python),
            "hand-written (pyarrow.compute)": hand_written(split_in_arrow),
            "full job": full_job,
        }
        for contestant in contestants.values():
            contestant(spark, path)  # warm-up: Python workers, JIT
        # Rounds, each contestant once per round: load from other processes hits all alike.
        results: dict[str, float] = dict.fromkeys(contestants, float("inf"))
        counted: set[int] = set()
        for _ in range(options.repeats):
            for name, contestant in contestants.items():
                seconds, keys = timed(partial(contestant, spark, path))
                counted.add(keys)
                results[name] = min(results[name], seconds)
        assert len(counted) == 1, f"contestants disagree on the distinct words: {counted}"
        print(f"{options.words} words, {counted.pop()} distinct, best of {options.repeats} rounds")
        for name, seconds in results.items():
            rate = options.words / seconds
            print(f"{name:32s} {seconds:7.2f} s  {rate / 1e6:5.2f} M words/s")
        for baseline in ("hand-written", "hand-written (pyarrow.compute)"):
            ratio = results[baseline] / results["processor"]
            print(f"ratio processor / {baseline}: {ratio:.2f}")
        spark.stop()


if __name__ == "__main__":
    main()
