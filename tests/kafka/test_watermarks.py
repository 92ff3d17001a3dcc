"""``source.kafka``'s watermarks per Kafka partition, coalesced by the seeds' rules: the
tracker on its own here, the real broker and Spark in ``test_kafka_windows``."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import ExecutionPlan, build_plan
from jetspark.dag.validate import validate_job
from worker.engine.ops.kafka import watermarks_used
from worker.engine.streaming.watermarks import WatermarkTracker


def plan_of(lp: int, *between: dict[str, Any]) -> ExecutionPlan:
    """``in`` (source.kafka) -> the ``between`` vertices in a line -> ``out`` (a logger)."""
    vertices = [
        {"name": "in", "processor": "source.kafka",
         "params": {"cluster": "events", "topics": ["t"], "idle_timeout_ms": 500}},
        *between,
        {"name": "out", "processor": "sink.logger", "local_parallelism": 1},
    ]  # fmt: skip
    edges = [
        {"from": a["name"], "to": b["name"], "routing": "broadcast", "distributed": True}
        for a, b in pairwise(vertices)
    ]
    body = {
        "name": "kwm",
        "dag": {"vertices": vertices, "edges": edges},
        "config": {"members": 1, "local_parallelism": lp},
    }
    return build_plan(validate_job(JobSpec.model_validate(body)))


WINDOW = {"name": "w", "processor": "window",
          "params": {"timestamp": "ts", "type": "tumbling", "size_ms": 10,
                     "aggregations": {"n": "count(*)"}}}  # fmt: skip
MAP = {"name": "m", "processor": "map", "params": {"select": {"ts": "ts"}}}
STAMP = {"name": "s", "processor": "insert_watermarks", "params": {"timestamp": "ts"}}


def test_watermarks_are_emitted_only_for_a_vertex_that_acts_on_them() -> None:
    assert watermarks_used(plan_of(1, WINDOW), "in")
    assert watermarks_used(plan_of(1, MAP, WINDOW), "in")
    assert not watermarks_used(plan_of(1), "in")
    assert not watermarks_used(plan_of(1, MAP), "in")
    assert not watermarks_used(plan_of(1, STAMP, WINDOW), "in")  # its own replace them


def observe(tracker: WatermarkTracker, lp: int, tops: dict[str, int], now_ms: int) -> None:
    owners = {f"t:{q}": q % lp for q in range(3)}
    tracker.observe_partitions(
        "in", owners, tops, allowed_lag_ms=10, idle_timeout_ms=500, now_ms=now_ms
    )


def forwarded(tracker: WatermarkTracker) -> list[int | None]:
    return [m.forwarded for m in tracker.of("in")]


def test_a_processor_forwards_the_minimum_of_its_partitions_minus_the_lag() -> None:
    tracker = WatermarkTracker.for_plan(plan_of(1))
    observe(tracker, 1, {"t:0": 1000, "t:1": 3000}, now_ms=0)
    assert forwarded(tracker) == [None]  # t:2 has no record yet and is not idle: held back
    observe(tracker, 1, {"t:2": 2000}, now_ms=100)
    assert forwarded(tracker) == [990]
    observe(tracker, 1, {"t:0": 5000, "t:1": 2500}, now_ms=200)  # t:1's top stays 3000
    assert forwarded(tracker) == [1990]
    assert tracker.of("in")[0].top_observed == 5000


def test_an_idle_partition_is_left_out_until_it_has_records_again() -> None:
    plan = plan_of(1)
    tracker = WatermarkTracker.for_plan(plan)
    observe(tracker, 1, {"t:0": 1000, "t:1": 2000}, now_ms=0)
    observe(tracker, 1, {"t:0": 1100, "t:1": 2100}, now_ms=499)
    assert forwarded(tracker) == [None]  # t:2 seen 499 ms ago: not idle yet
    observe(tracker, 1, {"t:0": 1200, "t:1": 2200}, now_ms=500)
    assert forwarded(tracker) == [1190]
    assert tracker.partitions["in"]["t:2"].idle
    observe(tracker, 1, {"t:2": 100, "t:0": 4000}, now_ms=600)  # wakes below: holds, never back
    assert forwarded(tracker) == [1190]
    assert not tracker.partitions["in"]["t:2"].idle
    observe(tracker, 1, {"t:2": 3000}, now_ms=700)
    assert forwarded(tracker) == [2190]  # min(4000, 2200, 3000) - 10
    assert tracker.coalesce(plan, "out") == {0: 2190}


def test_partitions_idle_together_forward_their_greatest_watermark_first() -> None:
    tracker = WatermarkTracker.for_plan(plan_of(1))
    observe(tracker, 1, {"t:0": 1000, "t:1": 2000}, now_ms=0)
    assert forwarded(tracker) == [None]  # t:2 holds it back
    observe(tracker, 1, {}, now_ms=600)  # all three idle in the same epoch
    assert forwarded(tracker) == [1990]
    assert tracker.of("in")[0].idle
    observe(tracker, 1, {"t:2": 500}, now_ms=700)  # t:2 wakes below it: it holds
    assert forwarded(tracker) == [1990]
    assert not tracker.of("in")[0].idle


def test_a_processor_whose_partitions_are_all_idle_is_idle() -> None:
    plan = plan_of(4)  # processor 3 has no partition: idle from the start
    tracker = WatermarkTracker.for_plan(plan)
    observe(tracker, 4, {"t:0": 1000, "t:1": 2000, "t:2": 3000}, now_ms=0)
    assert [m.idle for m in tracker.of("in")] == [False, False, False, True]
    assert tracker.coalesce(plan, "out") == {0: 990}
    observe(tracker, 4, {"t:1": 2500, "t:2": 3500}, now_ms=600)  # t:0 quiet for 600 ms
    assert [m.idle for m in tracker.of("in")] == [True, False, False, True]
    assert tracker.coalesce(plan, "out") == {0: 2490}
    observe(tracker, 4, {}, now_ms=2000)
    assert all(m.idle for m in tracker.of("in"))
    assert tracker.coalesce(plan, "out") == {0: 2490}  # every input idle: it stays
    assert tracker.of("out")[0].idle


def test_the_partitions_marks_are_kept_in_the_snapshot() -> None:
    plan = plan_of(1)
    tracker = WatermarkTracker.for_plan(plan)
    observe(tracker, 1, {"t:0": 1000, "t:1": 2000}, now_ms=0)
    restored = WatermarkTracker.from_json(tracker.to_json(), plan)
    assert restored.partitions == tracker.partitions
    assert restored.partitions["in"]["t:2"].last_ms == 0
    observe(restored, 1, {"t:0": 1100, "t:1": 2100}, now_ms=500)  # t:2's idle clock goes on
    assert forwarded(restored) == [1090]
    wider = WatermarkTracker.from_json(tracker.to_json(), plan_of(2))
    assert wider.partitions == tracker.partitions  # whoever owns them now
