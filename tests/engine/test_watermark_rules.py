"""The seeds' watermark rules, each on its own, on the driver-side tracker."""

from __future__ import annotations

from typing import Any

import pytest

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import ExecutionPlan, build_plan
from jetspark.dag.validate import validate_job
from worker.engine.streaming.watermarks import WatermarkNotIncreasing, WatermarkTracker


def plan_of(
    edge: dict[str, Any], *, members: int = 1, lp: int = 2, next_lp: int | None = None
) -> ExecutionPlan:
    body = {
        "name": "wm",
        "dag": {
            "vertices": [
                {"name": "src", "processor": "source.sequence", "params": {"count": None}},
                {
                    "name": "stamp",
                    "processor": "insert_watermarks",
                    "params": {"timestamp": "ts", "allowed_lag_ms": 10, "idle_timeout_ms": 500},
                },
                {"name": "next", "processor": "sink.logger", "local_parallelism": next_lp or lp},
            ],
            "edges": [{"from": "src", "to": "stamp"}, {"from": "stamp", "to": "next", **edge}],
        },
        "config": {"members": members, "local_parallelism": lp},
    }
    return build_plan(validate_job(JobSpec.model_validate(body)))


def observe(tracker: WatermarkTracker, tops: dict[int, int], now_ms: int) -> None:
    tracker.observe_events("stamp", tops, allowed_lag_ms=10, idle_timeout_ms=500, now_ms=now_ms)


def test_a_processor_forwards_its_top_timestamp_minus_the_allowed_lag() -> None:
    plan = plan_of({"routing": "broadcast"})
    tracker = WatermarkTracker.for_plan(plan)
    observe(tracker, {0: 1000, 1: 2000}, now_ms=0)
    assert [m.forwarded for m in tracker.of("stamp")] == [990, 1990]
    observe(tracker, {0: 900}, now_ms=1)  # an older item does not move it back
    assert tracker.of("stamp")[0].forwarded == 990


def test_the_coalesced_watermark_is_the_minimum_over_upstream_processors() -> None:
    plan = plan_of({"routing": "broadcast"})
    tracker = WatermarkTracker.for_plan(plan)
    observe(tracker, {0: 1000, 1: 2000}, now_ms=0)
    assert tracker.coalesce(plan, "next") == {0: 990, 1: 990}


def test_a_processor_without_a_watermark_yet_holds_everyone_back() -> None:
    plan = plan_of({"routing": "broadcast"})
    tracker = WatermarkTracker.for_plan(plan)
    observe(tracker, {0: 1000}, now_ms=0)
    assert tracker.coalesce(plan, "next") == {0: None, 1: None}


def test_an_idle_input_leaves_the_minimum_until_it_speaks_again() -> None:
    plan = plan_of({"routing": "broadcast"})
    tracker = WatermarkTracker.for_plan(plan)
    observe(tracker, {0: 1000, 1: 500}, now_ms=0)
    assert tracker.coalesce(plan, "next")[0] == 490
    observe(tracker, {0: 3000}, now_ms=400)  # 1 quiet for 400 ms: not idle yet
    assert tracker.coalesce(plan, "next")[0] == 490
    observe(tracker, {0: 4000}, now_ms=600)  # quiet for 600 ms > 500: idle, left out
    assert tracker.of("stamp")[1].idle
    assert tracker.coalesce(plan, "next")[0] == 3990
    observe(tracker, {0: 5000, 1: 700}, now_ms=700)  # it speaks again, far behind
    assert not tracker.of("stamp")[1].idle
    # The coalesced watermark never goes back: it waits until the minimum passes it.
    assert tracker.coalesce(plan, "next")[0] == 3990


def test_when_every_input_is_idle_the_receiver_is_idle_and_keeps_its_watermark() -> None:
    plan = plan_of({"routing": "broadcast"})
    tracker = WatermarkTracker.for_plan(plan)
    observe(tracker, {0: 1000, 1: 1000}, now_ms=0)
    tracker.coalesce(plan, "next")
    observe(tracker, {}, now_ms=1000)
    assert tracker.coalesce(plan, "next") == {0: 990, 1: 990}
    assert all(m.idle for m in tracker.of("next"))


def test_a_watermark_travels_on_every_edge_whatever_its_routing() -> None:
    for routing in ("unicast", "partitioned", "broadcast", "all_to_one"):
        edge = {"routing": routing} | ({"key": "seq"} if routing == "partitioned" else {})
        plan = plan_of(edge, next_lp=1)
        tracker = WatermarkTracker.for_plan(plan)
        observe(tracker, {0: 1000, 1: 2000}, now_ms=0)
        assert tracker.coalesce(plan, "next") == {0: 990}, routing


def test_a_local_edge_coalesces_only_the_processors_of_the_same_member() -> None:
    plan = plan_of({"routing": "unicast", "distributed": False}, members=2, lp=1)
    tracker = WatermarkTracker.for_plan(plan)
    observe(tracker, {0: 1000, 1: 2000}, now_ms=0)
    assert tracker.coalesce(plan, "next") == {0: 990, 1: 1990}
    distributed = plan_of({"routing": "unicast", "distributed": True}, members=2, lp=1)
    tracker = WatermarkTracker.for_plan(distributed)
    observe(tracker, {0: 1000, 1: 2000}, now_ms=0)
    assert tracker.coalesce(distributed, "next") == {0: 990, 1: 990}


def test_a_watermark_not_above_the_last_one_fails_naming_the_vertex() -> None:
    tracker = WatermarkTracker.for_plan(plan_of({"routing": "broadcast"}))
    tracker.forward("stamp", 0, 100)
    with pytest.raises(WatermarkNotIncreasing) as raised:
        tracker.forward("stamp", 0, 100)
    assert raised.value.vertex == "stamp"
    assert "must increase strictly" in str(raised.value)


def test_marks_survive_a_snapshot_and_a_rescale_takes_the_lowest() -> None:
    plan = plan_of({"routing": "broadcast"})
    tracker = WatermarkTracker.for_plan(plan)
    observe(tracker, {0: 1000, 1: 2000}, now_ms=0)
    same = WatermarkTracker.from_json(tracker.to_json(), plan)
    assert same.of("stamp") == tracker.of("stamp")
    wider = plan_of({"routing": "broadcast"}, lp=3)
    rescaled = WatermarkTracker.from_json(tracker.to_json(), wider)
    assert [m.forwarded for m in rescaled.of("stamp")] == [990, 990, 990]


def test_a_quiet_input_advances_with_the_wall_clock_after_max_lull() -> None:
    plan = plan_of({"routing": "broadcast"})
    tracker = WatermarkTracker.for_plan(plan)

    def lull(tops: dict[int, int], now_ms: int) -> None:
        tracker.observe_events(
            "stamp", tops, allowed_lag_ms=10, idle_timeout_ms=None, now_ms=now_ms, max_lull_ms=300
        )

    lull({0: 1000, 1: 1000}, now_ms=5000)
    lull({1: 1100}, now_ms=5200)  # processor 0 quiet for 200 ms: below the lull, it waits
    assert [m.forwarded for m in tracker.of("stamp")] == [990, 1090]
    lull({1: 1200}, now_ms=5400)  # 400 ms: top + 400 - lag
    assert [m.forwarded for m in tracker.of("stamp")] == [1390, 1190]
    lull({}, now_ms=5900)  # both quiet: each from its own last item
    assert [m.forwarded for m in tracker.of("stamp")] == [1890, 1690]
    assert tracker.coalesce(plan, "next") == {0: 1690, 1: 1690}
    lull({0: 1500}, now_ms=6000)  # speaks again below its lull watermark: it stays
    assert tracker.of("stamp")[0].forwarded == 1890
