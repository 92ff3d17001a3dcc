"""Where a job's time goes, on the page (issue 28), in headless Chromium against the real API
and a real worker: a stream's snapshot history (a chart of duration and size, a table) and
its timeline; event time far from the clock read as its pace and gap, not as a lag of
decades; a batch job's timeline, a bar per phase and Spark job. Offline, axe-checked;
screenshots in ``test-artifacts/``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.browser import serious_violations
from tests.api.test_snapshot_history import counted_stream
from tests.api.test_status_page import open_job, page, texts, wait_for_status
from tests.worker.test_live_metrics import hashing_job
from worker.loop import Worker

pytestmark = [pytest.mark.slow, pytest.mark.spark]
__all__ = ["page"]  # the fixture, shared with the status page's tests


def test_a_streams_snapshot_history_and_timeline_and_its_1970s_event_time(
    page: Any, http: httpx.Client, worker: Worker, artifacts_dir: Path
) -> None:
    del worker
    job_id = http.post("/v1/jobs", json=counted_stream("observed")).json()["id"]
    open_job(page, job_id)
    wait_for_status(page, "RUNNING", timeout_s=120)
    # Snapshots arrive as SSE events: the history table and chart follow without a reload.
    page.wait_for_function(
        "() => document.querySelectorAll("
        "'#snapshot-history tbody tr[data-state=committed]').length >= 3",
        timeout=240_000,
    )
    page.wait_for_function(
        "() => Number(document.getElementById('snapshot-chart').dataset.points) >= 2"
    )
    legend = " ".join(texts(page, "#snapshot-chart .u-legend th"))
    assert "duration" in legend and "size" in legend
    assert len(page.query_selector_all("#snapshot-chart .u-axis")) >= 3  # time, ms, bytes
    rows = page.eval_on_selector_all(
        "#snapshot-history tbody tr[data-state=committed]",
        "rs => rs.map(r => [...r.children].map(c => c.textContent))",
    )
    for row in rows:
        assert row[1] == "1" and row[2] == "committed", rows
        assert re.fullmatch(r"\d+ ms|\d+\.\d s", row[4]), rows  # duration
        assert re.fullmatch(r"\d+ B|\d+\.\d KiB", row[5]), rows  # size
    assert re.fullmatch(r"last \d+", page.inner_text("#snapshot-history-count"))

    # ts = seq * 7: event time in January 1970. No "lag 20782 d": its pace and gap instead.
    page.wait_for_function(
        "() => document.querySelector('#vertices tr[data-vertex=windows]')"
        "?.children[5].textContent.startsWith('event time +')",
        timeout=60_000,
    )
    lags = texts(page, "#vertices tbody tr td:nth-child(6)")
    assert not any(" d " in lag or lag.endswith(" d") for lag in lags), lags
    assert not any(lag.startswith("lag ") for lag in lags), lags

    # The timeline: the attempt's phases (stored at its first snapshot) and its snapshots.
    page.reload()
    page.wait_for_selector("#timeline-box:not([hidden]) #timeline .phase")
    # The history comes after the timings: wait for its bars, not for "first snapshot".
    page.wait_for_function(
        "() => [...document.querySelectorAll('#timeline .phase')]"
        ".some(g => /^snapshot \\d+: committed$/.test(g.dataset.phase))",
        timeout=60_000,
    )
    phases = page.eval_on_selector_all("#timeline .phase", "gs => gs.map(g => g.dataset.phase)")
    for phase in ("waiting in the queue", "planning", "first epoch", "first snapshot"):
        assert phase in phases, phases
    assert any(re.fullmatch(r"snapshot \d+: state written", p) for p in phases), phases
    assert any(re.fullmatch(r"snapshot \d+: committed", p) for p in phases), phases
    assert serious_violations(page) == []
    page.screenshot(path=str(artifacts_dir / "observe-snapshot-history.png"), full_page=True)
    assert http.post(f"/v1/jobs/{job_id}/cancel").status_code == 200
    wait_for_status(page, "CANCELLED", timeout_s=60)


def test_a_batch_jobs_timeline_has_a_bar_per_phase_and_spark_job(
    page: Any, http: httpx.Client, worker: Worker, word_count: dict[str, Any], artifacts_dir: Path
) -> None:
    del worker
    job_id = http.post("/v1/jobs", json=word_count).json()["id"]
    open_job(page, job_id)
    wait_for_status(page, "COMPLETED", timeout_s=180)
    page.wait_for_selector("#timeline-box:not([hidden]) #timeline .phase")
    phases = page.eval_on_selector_all("#timeline .phase", "gs => gs.map(g => g.dataset.phase)")
    for phase in (
        "waiting in the queue",
        "starting on the worker",
        "planning",
        "Spark work",
        "writing results",
    ):
        assert phase in phases, phases
    spark = [p for p in phases if p.startswith("Spark job ")]
    assert spark and all(re.fullmatch(r"Spark job \d+ \(stages [\d, ]+\)", p) for p in spark)
    durations = texts(page, "#timeline .phase text:last-child")
    assert durations and all(re.fullmatch(r"\d+ ms|\d+\.\d s", d) for d in durations), durations
    # Where to look it up in Spark's own UI or History Server: names and ids, no link into it.
    names = page.inner_text("#spark-names")
    assert names.startswith("Spark application ") and f"job group job-{job_id}" in names
    assert re.search(r"Spark jobs \d+(, \d+)* · stages \d+(, \d+)*$", names), names
    assert page.query_selector("#spark-names a") is None
    assert page.inner_text("#snapshot-history-empty") == "no snapshot taken yet"
    assert serious_violations(page) == []
    page.screenshot(path=str(artifacts_dir / "observe-batch-timeline.png"), full_page=True)

    # An operator who names where they see Spark's UI (JETSPARK_API_SPARK_UI_URL, served as
    # the page's config) gets each Spark job and stage linked there.
    assert http.get("/page-config.json").json() == {"spark_ui_url": None}
    proxy = "https://spark.ops.example/history/{application}/"
    page.route(
        "**/page-config.json",
        lambda route: route.fulfill(json={"spark_ui_url": proxy}),
    )
    page.reload()
    page.wait_for_selector("#spark-names a")
    application = names.split(" ")[2]
    hrefs = page.eval_on_selector_all("#spark-names a", "as => as.map(a => a.href)")
    base = f"https://spark.ops.example/history/{application}"
    assert hrefs[0].startswith(f"{base}/jobs/job/?id="), hrefs
    assert any(
        h.startswith(f"{base}/stages/stage/?id=") and h.endswith("&attempt=0") for h in hrefs
    )
    assert page.inner_text("#spark-names") == names  # the same words, linked


def test_a_running_streams_expensive_built_in_vertex_is_marked_its_bottleneck(
    page: Any, http: httpx.Client, worker: Worker, artifacts_dir: Path
) -> None:
    del worker
    numbers = {"processor": "source.sequence", "params": {"count": None, "rate_per_s": 4000}}
    body = hashing_job(numbers, field="seq", expensive=True)
    job_id = http.post("/v1/jobs", json=body).json()["id"]
    open_job(page, job_id)
    wait_for_status(page, "RUNNING", timeout_s=120)
    # Measured from Spark's stages once epochs have run: no processor of `hash` reports.
    page.wait_for_selector("#vertices tr.bottleneck[data-vertex=hash]", timeout=180_000)
    assert page.query_selector("#dag .vertex.bottleneck[data-vertex=hash]") is not None
    assert page.query_selector("#dag .vertex.bottleneck[data-vertex=numbers]") is None
    busy = page.inner_text("#vertices tr[data-vertex=hash] td:nth-child(9)")
    assert re.fullmatch(r"\d+% · bottleneck", busy) and int(busy.split("%")[0]) >= 50, busy
    assert "bottleneck" not in page.inner_text("#vertices tr[data-vertex=numbers] td:nth-child(9)")
    assert "bottleneck" in page.inner_text(".legend")
    assert serious_violations(page) == []
    page.screenshot(path=str(artifacts_dir / "observe-bottleneck.png"), full_page=True)
    assert http.post(f"/v1/jobs/{job_id}/cancel").status_code == 200
    wait_for_status(page, "CANCELLED", timeout_s=60)
