"""The streaming engine's stateful steps, epoch by epoch, against a plain-Python reference.

Events are generated with a seeded random (some out of order, some far behind: late), dealt
to processors at random and split into epochs; each processor's watermark after an epoch is
the highest timestamp it has seen minus a lag. The steps run epoch by epoch, their state
round-tripped through Arrow between epochs (as the engine stores it in Redis), and every
emitted row is compared, with the epoch it came out in and the Spark partition it sits on,
to the windows the reference computes from the same events with the same rules.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jetspark.dag.partitioning import partition_id
from jetspark.dag.processors import WindowParams
from worker.engine.routing import SLOT, place, slot_table
from worker.engine.stateful_aggregate import PARTITION, PROCESSOR, StepResult
from worker.engine.windowing import window_step

pytestmark = pytest.mark.spark

SCHEMA = "g int, k string, ts bigint, v int"
AGGREGATIONS = {
    "n": "count(*)",
    "total": "sum(v)",
    "lo": "min(v)",
    "last_ts": "max(ts)",
    "mean": "avg(v)",
}
KEYS = ["a", "bb", "ccc"]
EPOCHS = 5
LAG = 60
PARTITION_COUNT = 271

Wm = dict[int, int | None]
Row = Any


@dataclass(frozen=True)
class Event:
    g: int
    k: str
    ts: int
    v: int
    epoch: int


def events(seed: int, parallelism: int, count: int = 500) -> list[Event]:
    """Time advances in small steps with occasional pauses (sessions end there); most items
    are a little out of order, a few are far behind."""
    rng = random.Random(seed)
    now, made = 1_000, []
    for i in range(count):
        now += rng.randint(0, 12) + (rng.random() < 0.03) * 400
        ts = now - rng.randint(0, 80) - (rng.random() < 0.04) * 600
        made.append(
            Event(
                g=rng.randrange(parallelism),
                k=rng.choice(KEYS),
                ts=ts,
                v=rng.randint(-50, 100),
                epoch=i * EPOCHS // count,
            )
        )
    return made


def watermarks(evts: list[Event], parallelism: int) -> list[Wm]:
    """Per epoch, each processor's watermark after it: max ts seen so far - LAG."""
    seen: dict[int, int] = {}
    after: list[Wm] = []
    for epoch in range(EPOCHS):
        for e in evts:
            if e.epoch == epoch:
                seen[e.g] = max(seen.get(e.g, e.ts), e.ts)
        after.append({g: seen[g] - LAG if g in seen else None for g in range(parallelism)})
    return after


def is_late(e: Event, after: list[Wm]) -> bool:
    before = after[e.epoch - 1][e.g] if e.epoch > 0 else None
    return before is not None and e.ts < before


def aggregate(values: list[Event]) -> dict[str, Any]:
    vs = [e.v for e in values]
    return {
        "n": len(vs),
        "total": sum(vs),
        "lo": min(vs),
        "last_ts": max(e.ts for e in values),
        "mean": round(sum(vs) / len(vs), 9),
    }


def reference_windows(
    evts: list[Event], after: list[Wm], params: WindowParams
) -> list[tuple[Any, ...]]:
    """Every window as (epoch emitted, processor, key, start, end, aggregates...)."""
    groups: dict[tuple[int, str | None], list[Event]] = defaultdict(list)
    for e in evts:
        if not is_late(e, after):
            groups[(e.g, e.k if params.key else None)].append(e)
    windows: list[tuple[int, str | None, int, int, list[Event]]] = []
    for (g, key), members in groups.items():
        if params.type == "session":
            assert params.gap_ms is not None
            session: list[Event] = []
            for e in sorted(members, key=lambda e: e.ts):
                if session and e.ts >= session[-1].ts + params.gap_ms:
                    windows.append((g, key, session[0].ts, session[-1].ts + params.gap_ms, session))
                    session = []
                session.append(e)
            windows.append((g, key, session[0].ts, session[-1].ts + params.gap_ms, session))
            continue
        assert params.size_ms is not None
        size, slide = params.size_ms, params.slide_ms or params.size_ms
        by_start: dict[int, list[Event]] = defaultdict(list)
        for e in members:
            start = e.ts - e.ts % slide
            while start > e.ts - size:
                by_start[start].append(e)
                start -= slide
        windows += [(g, key, s, s + size, m) for s, m in by_start.items()]
    rows = []
    for g, key, start, end, members in windows:
        due = [i for i, wm in enumerate(after) if (w := wm[g]) is not None and w >= end]
        epoch = due[0] if due else EPOCHS - 1
        rows.append((epoch, g, key, start, end, *aggregate(members).values()))
    return sorted(rows, key=repr)


def reference_late(evts: list[Event], after: list[Wm]) -> Counter[tuple[int, int]]:
    return Counter((e.epoch, e.g) for e in evts if is_late(e, after))


def items_frame(spark: SparkSession, evts: list[Event], epoch: int, parallelism: int) -> DataFrame:
    """One epoch's items routed to the window vertex: processor g on partition g, with SLOT."""
    rows = [(e.g, e.k, e.ts, e.v) for e in evts if e.epoch == epoch]
    frame = spark.createDataFrame(rows, SCHEMA)
    return place(frame, F.col("g"), parallelism).drop("g")


def through_arrow(spark: SparkSession, state: DataFrame) -> tuple[DataFrame, list[Row]]:
    """The state as the engine restores it (serialised via Arrow, partitioning lost), and
    its rows."""
    table = state.toArrow()
    return spark.createDataFrame(table), table.to_pylist()


def emitted(result: StepResult) -> list[Row]:
    """The output with the Spark partition each row sits on."""
    return result.output.withColumn("__pid", F.spark_partition_id()).collect()


def run_windows(
    spark: SparkSession, evts: list[Event], params: WindowParams, parallelism: int
) -> Iterator[tuple[int, StepResult, list[Row], list[Row]]]:
    """Epoch by epoch: (epoch, result, emitted rows, state rows), state fed back."""
    after = watermarks(evts, parallelism)
    state: DataFrame | None = None
    for epoch in range(EPOCHS):
        result = window_step(
            items_frame(spark, evts, epoch, parallelism),
            state,
            params,
            parallelism=parallelism,
            partition_count=PARTITION_COUNT,
            wm_before=after[epoch - 1] if epoch else dict.fromkeys(range(parallelism)),
            wm_after=after[epoch],
            final=epoch == EPOCHS - 1,
        )
        state, rows = through_arrow(spark, result.state)
        yield epoch, result, emitted(result), rows


CASES = [
    pytest.param("tumbling", True, 2, {"size_ms": 250}, id="tumbling-keyed"),
    pytest.param("tumbling", False, 3, {"size_ms": 250}, id="tumbling"),
    pytest.param("sliding", True, 3, {"size_ms": 300, "slide_ms": 100}, id="sliding-keyed"),
    pytest.param("sliding", False, 2, {"size_ms": 250, "slide_ms": 100}, id="sliding-uneven"),
    pytest.param("session", True, 2, {"gap_ms": 70}, id="session-keyed"),
    pytest.param("session", False, 3, {"gap_ms": 40}, id="session"),
]


@pytest.mark.parametrize(("kind", "keyed", "parallelism", "sizes"), CASES)
def test_windows_over_epochs_match_the_reference(
    spark: SparkSession, kind: str, keyed: bool, parallelism: int, sizes: dict[str, int]
) -> None:
    params = WindowParams(
        timestamp="ts",
        type=kind,
        key="k" if keyed else None,
        aggregations=AGGREGATIONS,
        **sizes,
    )
    evts = events(seed=len(kind) * 7 + keyed * 3 + parallelism, parallelism=parallelism)
    after = watermarks(evts, parallelism)
    got: list[tuple[Any, ...]] = []
    late: Counter[tuple[int, int]] = Counter()
    slots = {s: g for g, s in enumerate(slot_table(parallelism))}
    for epoch, result, rows, state in run_windows(spark, evts, params, parallelism):
        for row in rows:
            g = row["__pid"]
            # Nothing comes out before its processor's watermark passes the window's end.
            wm = after[epoch][g]
            assert epoch == EPOCHS - 1 or (wm is not None and row["window_end"] <= wm)
            key = row["key"] if keyed else None
            values = [row[f] for f in AGGREGATIONS]
            values[-1] = round(values[-1], 9)
            got.append((epoch, g, key, row["window_start"], row["window_end"], *values))
        assert result.late is not None
        for count in result.late.collect():
            assert slots[count[SLOT]] == count[PROCESSOR]
            late[(epoch, count[PROCESSOR])] += count["late"]
        for kept in state:
            assert slots[kept[SLOT]] == kept[PROCESSOR]
            assert kept[PARTITION] == (
                partition_id(kept["__key"], PARTITION_COUNT) if keyed else kept[PROCESSOR]
            )
        if epoch == EPOCHS - 1:
            assert state == []  # final flushes everything
    expected = reference_windows(evts, after, params)
    assert len(expected) > 20
    assert sorted(got, key=repr) == expected  # each window once, in its epoch, on partition g
    assert +late == reference_late(evts, after)
    assert sum(late.values()) > 0
