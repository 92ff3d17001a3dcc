"""The word count a user writes, files in and files out, through ``jetspark up`` with its
defaults, against the same work hand-written in PySpark.

Run: ``make bench-files-wordcount`` (``.venv/bin/python -m bench.files_wordcount [--words N]
[--runs R]``), alone on the machine.

The job is the README's shape over real files: ``source.files`` (text, ``--words`` words over
100k keys, ten a line) -> ``flat_map`` (split on spaces) -> ``filter`` (no empty word) ->
``aggregate`` accumulate over a local partitioned edge -> ``aggregate`` combine over a
distributed partitioned edge -> ``sink.files`` (parquet). It runs on ``jetspark up`` as a user
starts it (``bench.stack``: its own API, worker and Spark JVM, embedded PostgreSQL and Redis,
every default kept), timed from the POST to the client seeing COMPLETED. The hand-written
program (read text, explode, filter, groupBy().count(), write parquet) runs in a warm
SparkSession of the bench's own, ``local[2]`` as the worker's, on the same files. The two
alternate, each going first every other run (one warm-up run each first), so a busy machine
slows both alike; the server's counts are checked to hold every word. Printed: each
one's p50, p90, max, the ratio hand-written / server of the medians and of the best runs, and
the server runs' phases (``bench.latency.phases``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from bench.engine_wordcount import text_file, word_count_job
from bench.latency import percentiles, phase_medians, run_once
from bench.stack import running_stack
from jetspark.spark_session import build_spark_session


def word_count_body(source: Path, target: Path) -> dict[str, Any]:
    """The README's word count over the text files at ``source``, its counts to ``target``:
    ``bench.engine_wordcount``'s with a ``filter`` after the split and ``sink.files``, every
    job setting left to its default."""
    body = word_count_job(source, {}, name="files-word-count")
    dag = body["dag"]
    words = {"name": "words", "processor": "filter", "params": {"where": "word != ''"}}
    counts = {"name": "counts", "processor": "sink.files",
              "params": {"path": str(target), "format": "parquet"}}  # fmt: skip
    dag["vertices"] = [
        *(v for v in dag["vertices"] if v["processor"] != "sink.results"),
        words,
        counts,
    ]
    for edge in dag["edges"]:
        if edge["from"] == "tokenize":
            edge["from"] = "words"
        if edge["to"] == "sink":
            edge["to"] = "counts"
    dag["edges"].append({"from": "tokenize", "to": "words"})
    return body


def hand_written(spark: SparkSession, source: Path, target: Path) -> float:
    """The same work as a PySpark user writes it; its seconds."""
    started = time.perf_counter()
    lines = spark.read.text(str(source))
    words = lines.select(F.explode(F.split("value", " ")).alias("word")).where("word != ''")
    words.groupBy("word").count().write.mode("overwrite").parquet(str(target))
    return time.perf_counter() - started


def counted_words(spark: SparkSession, target: Path) -> int:
    """The words counted in ``target`` (both programs must count every word)."""
    total = spark.read.parquet(str(target)).agg(F.sum("count")).first()
    return int(total[0]) if total is not None and total[0] is not None else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--words", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    spark = build_spark_session(master="local[2]", app_name="jetspark-bench-hand-written")
    spark.sparkContext.setLogLevel("ERROR")
    with running_stack(workers=1) as stack:
        data = stack.home / "data"  # the default data root of ``jetspark up``
        data.mkdir(parents=True, exist_ok=True)
        source = text_file(spark, args.words, data)
        stack.wait_workers_warm()
        headers = {"Authorization": f"Bearer {stack.token}"}
        server: list[float] = []
        hand: list[float] = []
        views: list[dict[str, Any]] = []
        with httpx.Client(base_url=stack.url, headers=headers, timeout=600) as http:
            for run in range(args.runs + 1):  # the first of each: warm-up
                target = data / f"server-{uuid.uuid4().hex[:8]}"
                mine = data / f"hand-{uuid.uuid4().hex[:8]}"
                if run % 2:  # alternate which goes first
                    hand_s = hand_written(spark, source, mine)
                seconds, view = run_once(http, word_count_body(source, target))
                if run % 2 == 0:
                    hand_s = hand_written(spark, source, mine)
                if counted_words(spark, target) != args.words:
                    raise RuntimeError(f"the server's counts at {target} miss words")
                if run:
                    server.append(seconds)
                    hand.append(hand_s)
                    views.append(view)
                print(f"run {run}: server {seconds:.2f} s, hand-written {hand_s:.2f} s", flush=True)
    spark.stop()
    report = {
        "words": args.words,
        "runs": args.runs,
        "server": percentiles(server),
        "hand_written": percentiles(hand),
        "ratio_p50": statistics.median(hand) / statistics.median(server),
        "ratio_best": min(hand) / min(server),
        "server_phase_p50_ms": phase_medians(views),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
