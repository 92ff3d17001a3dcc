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
from functools import partial
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jetspark.dag.kinds import AggregateParams, WindowParams
from jetspark.dag.partitioning import partition_id
from tests.engine.generated_code import generated_code
from worker.engine.routing import SLOT, place, slot_table
from worker.engine.state_columns import PARTITION, PROCESSOR
from worker.engine.stateful_aggregate import StepResult, aggregate_step
from worker.engine.windowing import START, window_step

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
EPOCHS = 4
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


def events(seed: int, parallelism: int, count: int = 400) -> list[Event]:
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


class Kept:
    """A ``keep`` that persists, as the engine's does, and unpersists after the epoch."""

    def __init__(self) -> None:
        self.frames: list[DataFrame] = []

    def __call__(self, frame: DataFrame) -> DataFrame:
        self.frames.append(frame.persist())
        return frame

    def release(self) -> None:
        for frame in self.frames:
            frame.unpersist()
        self.frames.clear()


def emitted(result: StepResult) -> list[Row]:
    """The output with the Spark partition each row sits on."""
    return result.output.withColumn("__pid", F.spark_partition_id()).collect()


def run_windows(
    spark: SparkSession, evts: list[Event], params: WindowParams, parallelism: int
) -> Iterator[tuple[int, StepResult, list[Row], list[Row]]]:
    """Epoch by epoch: (epoch, result, emitted rows, state rows), state fed back."""
    after = watermarks(evts, parallelism)
    state: DataFrame | None = None
    kept = Kept()
    for epoch in range(EPOCHS):
        result = window_step(
            items_frame(spark, evts, epoch, parallelism),
            state,
            params,
            parallelism=parallelism,
            partition_count=PARTITION_COUNT,
            wm_before=after[epoch - 1] if epoch else dict.fromkeys(range(parallelism)),
            wm_after=partial(dict, after[epoch]),
            final=epoch == EPOCHS - 1,
            keep=kept,
        )
        state, rows = through_arrow(spark, result.state)
        yield epoch, result, emitted(result), rows
        kept.release()


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
        for g, count in result.late.per_processor().items():
            late[(epoch, g)] += count
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


def one_epoch(
    spark: SparkSession,
    rows: list[tuple[int, str, int, int]],
    state: DataFrame | None,
    params: WindowParams,
    **watermarks: Any,
) -> tuple[list[Row], DataFrame, list[Row]]:
    """One epoch on one processor (``one_step``'s watermarks and ``final``): (emitted rows,
    state fed back, state rows)."""
    result = one_step(spark, rows, state, params, **watermarks)
    carried, state_rows = through_arrow(spark, result.state)
    return result.output.collect(), carried, state_rows


def one_step(
    spark: SparkSession,
    rows: list[tuple[int, str, int, int]],
    state: DataFrame | None,
    params: WindowParams,
    *,
    before: int | None,
    after: int | None,
    final: bool = False,
) -> StepResult:
    """``window_step`` over ``rows`` on one processor."""
    frame = place(spark.createDataFrame(rows, SCHEMA), F.col("g"), 1).drop("g")
    return window_step(
        frame,
        state,
        params,
        parallelism=1,
        partition_count=PARTITION_COUNT,
        wm_before={0: before},
        wm_after=lambda: {0: after},
        final=final,
    )


def test_a_later_epoch_bridges_two_stored_sessions(spark: SparkSession) -> None:
    params = WindowParams(
        timestamp="ts", type="session", gap_ms=100, key="k", aggregations={"n": "count(*)"}
    )
    # Epoch 0: [0, 100) and [300, 400) for "a"; 1000 and 1100 for "b" are exactly one gap
    # apart, which does not join them.
    first = [(0, "a", 0, 1), (0, "a", 300, 1), (0, "b", 1000, 1), (0, "b", 1100, 1)]
    out, state, rows = one_epoch(spark, first, None, params, before=None, after=50)
    assert out == []
    assert sorted((r["__key"], r["__window_start"], r["__window_end"]) for r in rows) == [
        ("a", 0, 100), ("a", 300, 400), ("b", 1000, 1100), ("b", 1100, 1200),
    ]  # fmt: skip
    # Epoch 1: 90, 180 and 270 chain [0, 100) to [300, 400): one session of five items.
    bridge = [(0, "a", 90, 1), (0, "a", 270, 1), (0, "a", 180, 1)]
    out, state, rows = one_epoch(spark, bridge, state, params, before=50, after=399)
    assert out == []
    assert sorted((r["__key"], r["__window_start"], r["__window_end"], r["n"]) for r in rows) == [
        ("a", 0, 400, 5), ("b", 1000, 1100, 1), ("b", 1100, 1200, 1),
    ]  # fmt: skip
    # Epoch 2: the watermark reaches its end; an item at 399 is on time and joins it first.
    out, state, rows = one_epoch(spark, [(0, "a", 399, 1)], state, params, before=399, after=499)
    assert [r.asDict() for r in out] == [{"window_start": 0, "window_end": 499, "key": "a", "n": 6}]
    # Epoch 3: 398 is late now (and counted nowhere); the end of the stream flushes "b".
    out, state, rows = one_epoch(
        spark, [(0, "a", 398, 1)], state, params, before=499, after=None, final=True
    )
    assert sorted(tuple(r) for r in out) == [(1000, 1100, "b", 1), (1100, 1200, "b", 1)]
    assert rows == []


def aggregate_epochs(
    spark: SparkSession, params: AggregateParams, batches: list[list[Event]], parallelism: int
) -> list[list[Row]]:
    """Run ``aggregate_step`` over the batches (the last one final): each epoch's output,
    with the partition each row sits on."""
    state: DataFrame | None = None
    outputs = []
    kept = Kept()
    for epoch, batch in enumerate(batches):
        rows = [(e.g, e.k, e.ts, e.v) for e in batch]
        frame = place(spark.createDataFrame(rows, SCHEMA), F.col("g"), parallelism).drop("g")
        result = aggregate_step(
            frame,
            state,
            params,
            parallelism=parallelism,
            partition_count=PARTITION_COUNT,
            final=epoch == len(batches) - 1,
            keep=kept,
        )
        assert result.late is None
        state, state_rows = through_arrow(spark, result.state)
        if epoch == len(batches) - 1:
            assert state_rows == []
        else:
            assert {r[PARTITION] for r in state_rows} <= {
                partition_id(k, PARTITION_COUNT) for k in KEYS
            } | set(range(parallelism))
        outputs.append(emitted(result))
        kept.release()
    return outputs


@pytest.mark.parametrize("keyed", [True, False], ids=["keyed", "global"])
def test_aggregate_step_over_epochs_equals_one_aggregate(spark: SparkSession, keyed: bool) -> None:
    parallelism = 3
    evts = events(seed=5, parallelism=parallelism, count=300)
    params = AggregateParams(
        key="k" if keyed else None,
        aggregations={"n": "count(*)", "total": "sum(v)", "mean": "avg(v)"},
    )
    batches = [[e for e in evts if e.epoch == epoch] for epoch in range(3)]
    batches.append([e for e in evts if e.epoch >= 3])
    *before, last = aggregate_epochs(spark, params, batches, parallelism)
    assert before == [[], [], []]  # nothing before the end of the stream
    counts: Counter[tuple[int, str | None]] = Counter()
    totals: Counter[tuple[int, str | None]] = Counter()
    for e in evts:
        group = (e.g, e.k if keyed else None)
        counts[group] += 1
        totals[group] += e.v
    got = {(r["__pid"], r["key"] if keyed else None): r for r in last}
    assert set(got) == set(counts)  # one row per (processor, key), on partition g
    for group, row in got.items():
        assert (row["n"], row["total"]) == (counts[group], totals[group])
        assert row["mean"] == pytest.approx(totals[group] / counts[group])


def test_a_global_aggregate_of_nothing_is_one_row(spark: SparkSession) -> None:
    params = AggregateParams(aggregations={"n": "count(*)", "total": "sum(v)"})
    outputs = aggregate_epochs(spark, params, [[], []], parallelism=1)
    assert [[(r["n"], r["total"], r["__pid"]) for r in rows] for rows in outputs] == [
        [],
        [(0, None, 0)],
    ]


def test_aggregate_step_accumulate_then_combine(spark: SparkSession) -> None:
    """Two streaming stages as in the seeds' two-stage aggregation: the accumulate stage's
    partial results (an average's {sum, count}) are what the combine stage merges."""
    evts = events(seed=9, parallelism=2, count=200)
    aggregations = {"n": "count(*)", "mean": "avg(v)", "hi": "max(v)"}
    first = AggregateParams(key="k", aggregations=aggregations, stage="accumulate")
    batches = [[e for e in evts if e.epoch < 2], [e for e in evts if e.epoch >= 2]]
    partial = aggregate_epochs(spark, first, batches, parallelism=2)[-1]
    frame = spark.createDataFrame([r.asDict(recursive=True) for r in partial])
    frame = place(frame, F.lit(0), 1).drop("__pid")
    second = AggregateParams(key="key", aggregations=aggregations, stage="combine")
    result = aggregate_step(frame, None, second, parallelism=1, partition_count=271, final=True)
    got = {r["key"]: (r["n"], r["mean"], r["hi"]) for r in result.output.collect()}
    for key in KEYS:
        values = [e.v for e in evts if e.k == key]
        assert got[key][0] == len(values)
        assert got[key][1] == pytest.approx(sum(values) / len(values))
        assert got[key][2] == max(values)


def test_a_window_ending_at_the_watermark_is_emitted_and_an_item_at_it_is_not_late(
    spark: SparkSession,
) -> None:
    params = WindowParams(timestamp="ts", type="tumbling", size_ms=100, aggregations=AGGREGATIONS)
    first = [(0, "a", 0, 1), (0, "a", 99, 2), (0, "a", 100, 3)]
    out, state, _ = one_epoch(spark, first, None, params, before=None, after=100)
    assert [(r["window_start"], r["window_end"], r["n"]) for r in out] == [(0, 100, 2)]
    out, state, _ = one_epoch(
        spark, [(0, "a", 99, 4), (0, "a", 100, 5)], state, params, before=100, after=199
    )
    assert out == []
    out, state, rows = one_epoch(spark, [], state, params, before=199, after=199, final=True)
    assert [(r["window_start"], r["n"], r["total"]) for r in out] == [(100, 2, 8)]
    assert rows == []


def test_the_next_epochs_step_runs_the_same_compiled_code(spark: SparkSession) -> None:
    """Watermarks change every epoch; they are data of the step's plan, not numbers written
    into its generated code (``epoch_values``), so Spark compiles the step once."""
    params = WindowParams(
        timestamp="ts", type="tumbling", size_ms=100, key="k", aggregations=AGGREGATIONS
    )
    planned_whole = spark.newSession()  # adaptive execution plans its stages as they run
    planned_whole.conf.set("spark.sql.adaptive.enabled", "false")

    def code(at: int, before: int, after: int) -> list[str]:
        rows = [(0, "a", at + 50, 1), (0, "b", at + 150, 2)]
        step = one_step(planned_whole, rows, None, params, before=before, after=after)
        return generated_code(step.output) + generated_code(step.state)

    first = code(100, 100, 200)
    assert first, "no code-generated stage"
    assert code(200, 200, 300) == first
    assert code(12_345_678_900, 12_345_678_900, 12_345_679_000) == first


def test_an_epoch_that_closes_no_window_runs_nothing_downstream(spark: SparkSession) -> None:
    """Its output is an empty relation once Spark optimizes it (so a sink downstream runs no
    task for it), and its windows are all carried."""
    params = WindowParams(timestamp="ts", type="tumbling", size_ms=100, aggregations=AGGREGATIONS)
    rows = [(0, "a", 150, 1), (0, "a", 250, 2)]
    step = one_step(spark, rows, None, params, before=100, after=199)
    optimized = step.output._jdf.queryExecution().optimizedPlan().toString()
    assert optimized.startswith("LocalRelation <empty>"), optimized
    assert sorted(r[START] for r in step.state.collect()) == [100, 200]
    closing = one_step(spark, rows, None, params, before=100, after=200)
    assert [r["window_start"] for r in closing.output.collect()] == [100]


def test_items_over_a_fused_edge_stay_with_their_processor(spark: SparkSession) -> None:
    """Without ``SLOT`` (a fused edge), processor g is the partition an item is on."""
    rows = [(0, KEYS[i % 3], i, i) for i in range(60)]
    frame = spark.createDataFrame(rows, SCHEMA).repartition(3).persist()
    per_partition = Counter(
        r["p"] for r in frame.select(F.spark_partition_id().alias("p")).collect()
    )
    params = AggregateParams(aggregations={"n": "count(*)"})
    result = aggregate_step(frame, None, params, parallelism=3, partition_count=271, final=True)
    assert Counter({r["__pid"]: r["n"] for r in emitted(result)}) == per_partition
    frame.unpersist()


def test_a_timestamp_typed_event_time_counts_in_milliseconds(spark: SparkSession) -> None:
    params = WindowParams(
        timestamp="timestamp_millis(ts)",
        type="tumbling",
        size_ms=100,
        aggregations={"n": "count(*)"},
    )
    rows = [(0, "a", 50, 1), (0, "a", 150, 1), (0, "a", 160, 1)]
    out, _, _ = one_epoch(spark, rows, None, params, before=None, after=None, final=True)
    assert sorted((r["window_start"], r["window_end"], r["n"]) for r in out) == [
        (0, 100, 1), (100, 200, 2),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "sizes"),
    [("tumbling", {"size_ms": 100}), ("sliding", {"size_ms": 200, "slide_ms": 100}),
     ("session", {"gap_ms": 50})],
)  # fmt: skip
def test_a_late_item_is_counted_and_reaches_no_aggregation(
    spark: SparkSession, kind: str, sizes: dict[str, int]
) -> None:
    """A late item is dropped before any aggregation sees it: here its value would overflow
    the sum (Spark's ANSI mode fails the job), the on-time items' would not."""
    params = WindowParams(
        timestamp="ts",
        type=kind,
        key="k",
        aggregations={"n": "count(*)", "big": "sum(cast(v as bigint) * 9223372036854775807)"},
        **sizes,
    )
    rows = [(0, "a", 500, 0), (0, "a", 520, 0), (0, "b", 100, 2), (0, "a", 90, 3)]
    result = one_step(spark, rows, None, params, before=400, after=1000)
    out = result.output.collect()
    assert result.late is not None
    assert result.late.per_processor() == {0: 2}
    assert {r["key"] for r in out} == {"a"}
    assert sum(r["n"] for r in out) == (2 if kind != "sliding" else 4)  # two windows each
    assert all(r["big"] == 0 for r in out)
