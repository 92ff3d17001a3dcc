"""Busy and backpressure of built-in vertices from their pipelines' stages (SPEC §6): the
arithmetic over stage spans, without Spark (``worker/vertex_load.py``)."""

from __future__ import annotations

from worker.spark_pipelines import PipelineRun
from worker.vertex_load import STREAM_WINDOW_MS, fused_loads, vertex_loads, window_of


def run(vertices: set[str], start: int, end: int, query_end: int, *, tasks: int = 2,
        run_ms: int | None = None) -> PipelineRun:  # fmt: skip
    return PipelineRun(
        vertices=frozenset(vertices),
        stage=start,
        run_ms=(end - start) * min(tasks, 2) if run_ms is None else run_ms,
        tasks=tasks,
        started_ms=start,
        ended_ms=end,
        query_ended_ms=query_end,
    )


def test_an_expensive_stage_after_a_cheap_one_is_busy_and_holds_the_cheap_one_back() -> None:
    runs = [run({"numbers"}, 0, 100, 5100), run({"hash", "out"}, 100, 5100, 5100)]
    window = window_of(runs, stream=False)
    assert window == (0, 5100)
    loads = vertex_loads(runs, window, cores=2, behind=None)
    assert loads["hash"].busy_ratio >= 0.95 and loads["out"] == loads["hash"]
    assert loads["hash"].backpressure_ratio == 0.0
    assert loads["numbers"].busy_ratio < 0.05
    # held back for what the hash stage took beyond the 100 ms numbers took itself
    assert loads["numbers"].backpressure_ratio == round(4900 / 5100, 4)


def test_cheap_stages_one_after_the_other_hold_nothing_back_in_a_batch_job() -> None:
    runs = [run({"numbers"}, 0, 100, 190), run({"doubled"}, 100, 190, 190)]
    loads = vertex_loads(runs, (0, 190), cores=2, behind=None)
    assert loads["numbers"].backpressure_ratio == 0.0
    assert loads["doubled"].backpressure_ratio == 0.0


def test_a_stream_is_held_back_only_while_it_ran_behind_its_epochs() -> None:
    # two epochs of 1 s, each: source stage 100 ms, expensive stage 800 ms
    runs = [
        run({"numbers"}, 0, 100, 900),
        run({"hash"}, 100, 900, 900),
        run({"numbers"}, 1000, 1100, 1900),
        run({"hash"}, 1100, 1900, 1900),
    ]
    window = window_of(runs, stream=True)
    assert window == (0, 1900)
    keeping_pace = vertex_loads(runs, window, cores=2, behind=[])
    assert keeping_pace["numbers"].backpressure_ratio == 0.0
    assert keeping_pace["hash"].busy_ratio == round(1600 / 1900, 4)
    behind = vertex_loads(runs, window, cores=2, behind=[(200, 1000), (1200, 2000)])
    assert behind["numbers"].backpressure_ratio == round(1400 / 1900, 4)
    assert behind["hash"].backpressure_ratio == 0.0


def test_a_vertex_is_not_held_back_while_its_own_later_stage_runs() -> None:
    runs = [run({"agg"}, 0, 100, 300), run({"agg", "out"}, 100, 300, 300)]
    loads = vertex_loads(runs, (0, 300), cores=2, behind=None)
    assert loads["agg"].backpressure_ratio == 0.0


def test_one_task_stages_count_one_slot_and_a_stream_looks_at_its_newest_seconds() -> None:
    runs = [run({"all"}, 0, 1000, 1000, tasks=1, run_ms=1000)]
    assert vertex_loads(runs, (0, 1000), cores=2, behind=None)["all"].busy_ratio == 1.0
    late = STREAM_WINDOW_MS * 3
    window = window_of([*runs, run({"all"}, late - 500, late, late)], stream=True)
    assert window == (late - STREAM_WINDOW_MS, late)
    assert window_of([], stream=True) is None


def test_a_vertex_no_query_named_takes_the_load_of_the_vertices_fused_with_it() -> None:
    loads = vertex_loads([run({"lines"}, 0, 900, 1000), run({"agg"}, 900, 1000, 1000)],
                         (0, 1000), cores=2, behind=None)  # fmt: skip
    # lines -(fused)-> tokenize -(fused)-> split -(exchange)-> agg
    found = fused_loads(loads, [["lines", "tokenize", "split"], ["agg"]])
    assert found["tokenize"] == found["split"] == loads["lines"]
    assert found["agg"] == loads["agg"] and "other" not in found


def test_tiny_stages_whose_time_is_sparks_own_cost_hold_nothing_back() -> None:
    # a two-line word count: three stages of ~100-150 ms wall, a few ms of work each
    runs = [
        run({"lines", "tokenize"}, 0, 150, 500, run_ms=12),
        run({"combine"}, 200, 330, 500, run_ms=10),
        run({"sink"}, 380, 500, 500, run_ms=6),
    ]
    loads = vertex_loads(runs, (0, 500), cores=2, behind=None)
    assert all(load.backpressure_ratio < 0.1 for load in loads.values()), loads  # all ok
    assert all(load.busy_ratio < 0.1 for load in loads.values()), loads
