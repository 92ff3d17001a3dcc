"""Validation time of the largest DAG the limits allow, against a small DAG of the same shape.

Run: ``.venv/bin/python -m bench.validation_size [--repeat N]``.
Shape: one source fanning out to V-2 ``map`` vertices that all rejoin at one sink with
distinct priorities and no ``buffered`` flag (every pair is a rejoin problem: the worst case
of the fork-and-rejoin check), plus chains filling the edge limit. Reported: the median time
of ``validate_job`` (refusal included) for 256 vertices / 1024 edges and for 16 vertices, and
their ratio; linear validation keeps the ratio near the ratio of the sizes, the pairwise
ancestor walks it replaces took 30-40 s for 254 vertices.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from typing import Any

from jetspark.dag.errors import DagValidationError
from jetspark.dag.model import JobSpec
from jetspark.dag.validate import validate_job
from jetspark.settings import DagLimits


def wide_dag(vertices: int, edges: int) -> JobSpec:
    names = [f"v{i}" for i in range(vertices)]
    middle = names[1:-1]
    specs: list[dict[str, Any]] = [
        {"name": names[0], "processor": "source.sequence", "params": {"count": 1}}
    ]
    specs += [{"name": n, "processor": "map", "params": {"select": {"seq": "seq + 1"}}}
              for n in middle]  # fmt: skip
    specs += [{"name": names[-1], "processor": "sink.results"}]
    links: list[dict[str, Any]] = [{"from": names[0], "to": n} for n in middle]
    links += [
        {"from": n, "to": names[-1], "to_ordinal": i, "priority": i} for i, n in enumerate(middle)
    ]
    out = dict.fromkeys(middle, 1)
    into = dict.fromkeys(middle, 1)
    pairs = ((a, b) for i, a in enumerate(middle) for b in middle[i + 1 :])
    while len(links) < edges:  # chains m_i -> m_j until the edge limit
        source, target = next(pairs)
        links.append(
            {"from": source, "to": target, "from_ordinal": out[source], "to_ordinal": into[target]}
        )
        out[source] += 1
        into[target] += 1
    body = {"name": "wide", "dag": {"vertices": specs, "edges": links[:edges]}}
    return JobSpec.model_validate(body)


def seconds(spec: JobSpec, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        with contextlib.suppress(DagValidationError):
            validate_job(spec)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    limits = DagLimits()
    big = wide_dag(limits.max_vertices, limits.max_edges)
    small = wide_dag(16, 64)
    big_s, small_s = seconds(big, args.repeat), seconds(small, args.repeat)
    print(
        f"validate_job: {len(big.dag.vertices)} vertices / {len(big.dag.edges)} edges "
        f"{big_s * 1000:.1f} ms; {len(small.dag.vertices)} / {len(small.dag.edges)} "
        f"{small_s * 1000:.2f} ms; ratio {big_s / small_s:.1f}x"
    )


if __name__ == "__main__":
    main()
