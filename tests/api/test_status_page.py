"""The web status page in headless Chromium (Debian's, driven by Playwright) against the real
API and a real worker: submit a DAG and watch it complete, cancel another, names escaped; with
no network (tests/api/browser.py), and no serious or critical axe violation on any view.

Screenshots are kept in ``test-artifacts/``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.browser import offline_tab, serious_violations
from tests.api.conftest import TOKEN
from tests.worker.conftest import LONG_JOB
from worker.loop import Worker

pytestmark = [pytest.mark.slow, pytest.mark.spark]

# app.js waits this long after the last key before the name filter asks the API.
NAME_FILTER_PAUSE_MS = 300


@pytest.fixture
def page(api_url: str) -> Iterator[Any]:
    with offline_tab() as tab:
        tab.page.goto(f"{api_url}/")
        tab.page.fill("#token", TOKEN)
        tab.page.click("#token-form button")
        tab.page.wait_for_selector("#list-view:not([hidden])")
        yield tab.page
        assert not tab.errors, f"the page raised: {tab.errors}"
        assert not tab.blocked, f"the page asked the internet for: {tab.blocked}"


def focused_id(page: Any) -> str:
    found: str = page.evaluate("() => document.activeElement?.id || ''")
    return found


def submit_through_page(page: Any, body: dict[str, Any]) -> str:
    page.goto(page.url.split("#")[0] + "#/")
    page.wait_for_selector("#list-view:not([hidden])")
    page.fill("#dag-body", json.dumps(body))
    page.click("#submit-dag")
    page.wait_for_url("**/#/jobs/*")
    return str(page.url.rsplit("/", 1)[1])


def wait_for_status(page: Any, status: str, *, timeout_s: float = 120) -> None:
    page.wait_for_function(
        "s => document.getElementById('job-status').textContent === s",
        arg=status,
        timeout=timeout_s * 1000,
    )


def test_a_submitted_dag_runs_to_completion_on_the_page_and_another_is_cancelled(
    page: Any, worker: Worker, word_count: dict[str, Any], artifacts_dir: Path
) -> None:
    del worker
    job_id = submit_through_page(page, word_count)
    page.wait_for_selector("#dag .vertex")
    # The view changed: focus is on its heading, which names the job.
    page.wait_for_function("() => document.activeElement?.id === 'job-title'")
    assert page.inner_text("#job-title").startswith(word_count["name"])
    drawn = page.eval_on_selector_all("#dag .vertex", "gs => gs.map(g => g.dataset.vertex)")
    assert sorted(drawn) == sorted(v["name"] for v in word_count["dag"]["vertices"])
    edges = page.eval_on_selector_all("#dag .edge text", "ts => ts.map(t => t.textContent)")
    assert "partitioned(word)" in edges
    wait_for_status(page, "COMPLETED")
    history = page.inner_text("#history")
    assert "RUNNING → COMPLETED" in history or "COMPLETING → COMPLETED" in history
    # Screen readers hear the change: a polite live region says it.
    assert page.get_attribute("#announcer", "aria-live") == "polite"
    wait_for_text(page, "#announcer", f"Job {word_count['name']} is COMPLETED")
    page.wait_for_selector("#results-panel:not([hidden]) #results tbody tr")
    assert serious_violations(page) == []
    page.screenshot(path=str(artifacts_dir / "status-page-completed.png"), full_page=True)

    endless = submit_through_page(page, {**LONG_JOB, "name": "endless"})
    wait_for_status(page, "RUNNING")
    page.click("#job-view [data-action=cancel]")
    wait_for_status(page, "CANCELLED", timeout_s=30)
    page.screenshot(path=str(artifacts_dir / "status-page-cancelled.png"), full_page=True)

    page.goto(page.url.split("#")[0] + "#/")
    page.wait_for_function("() => document.activeElement?.id === 'list-title'")
    for done, status in ((job_id, "COMPLETED"), (endless, "CANCELLED")):
        # The list renders what it fetched, then follows /v1/events: wait for the live status.
        page.wait_for_function(
            "([sel, s]) => document.querySelector(sel)?.textContent === s",
            arg=[f"#jobs tr[data-job-id='{done}'] td.status", status],
            timeout=30_000,
        )


def test_the_list_updates_live_and_shows_hostile_names_as_text(
    page: Any, api_url: str, word_count: dict[str, Any], artifacts_dir: Path
) -> None:
    import httpx

    hostile = '<img src=x onerror="window.pwned=1">'
    body = {**word_count, "name": hostile}
    # A function, not an expression: Playwright evals bare expressions, which the CSP forbids.
    page.wait_for_function("() => document.getElementById('live').textContent === 'live'")
    with httpx.Client(base_url=api_url, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        job_id = http.post("/v1/jobs", json=body).json()["id"]
        row = f"#jobs tr[data-job-id='{job_id}']"
        page.wait_for_selector(row)  # arrived through /v1/events, no reload
        http.post(f"/v1/jobs/{job_id}/cancel")
    page.wait_for_function(
        "sel => document.querySelector(sel + ' td.status').textContent === 'CANCELLED'",
        arg=row,
    )
    assert page.inner_text(f"{row} td a") == hostile
    assert page.evaluate("window.pwned") is None
    assert serious_violations(page) == []
    page.screenshot(path=str(artifacts_dir / "status-page-list.png"), full_page=True)


def test_the_name_filter_asks_once_typing_stops(
    page: Any, http: Any, word_count: dict[str, Any]
) -> None:
    name = f"filtered-{time.monotonic_ns()}"
    job_id = http.post("/v1/jobs", json={**word_count, "name": name}).json()["id"]
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/v1/jobs?" in r.url else None)
    # The page's clock is Playwright's: 40 ms pass between keys, whatever the machine's load
    # (a busy CI runner once let 300 real ms go by after the first key). One request, for the
    # whole name: any request for part of it would have gone before the one for all of it.
    page.clock.install()
    page.clock.pause_at(time.time() + 60)
    field = page.locator("#filter-name")
    with page.expect_request(lambda r: r.url.endswith(f"name={name}"), timeout=30_000):
        for key in name:
            field.press(key)
            page.clock.run_for(40)
        page.clock.run_for(NAME_FILTER_PAUSE_MS)
    page.wait_for_selector(f"#jobs tr[data-job-id='{job_id}']")
    page.wait_for_function("() => document.querySelectorAll('#jobs tbody tr').length === 1")
    filtered = [url for url in asked if "name=" in url]
    assert len(filtered) == 1 and filtered[0].endswith(f"name={name}"), filtered


def clicks_per_second(now_ms: int) -> dict[str, Any]:
    """A stream of clicks stamped over the last minute, counted per user per second,
    exactly once: watermarks near now, snapshots, 3 users x 60 windows of results."""
    return {
        "name": "clicks per second",
        "dag": {
            "vertices": [
                {"name": "clicks", "processor": "source.sequence",
                 "params": {"count": 1200, "rate_per_s": 300}},
                {"name": "events", "processor": "map",
                 "params": {"select": {"user": "seq % 3", "ts": f"{now_ms - 60_000} + seq * 50"}}},
                {"name": "stamped", "processor": "insert_watermarks",
                 "params": {"timestamp": "ts", "allowed_lag_ms": 500}},
                {"name": "per_second", "processor": "window",
                 "params": {"timestamp": "ts", "type": "tumbling", "size_ms": 1000, "key": "user",
                            "aggregations": {"clicks": "count(*)"}}},
                {"name": "out", "processor": "sink.results"},
            ],
            "edges": [
                {"from": "clicks", "to": "events"},
                {"from": "events", "to": "stamped"},
                {"from": "stamped", "to": "per_second", "routing": "partitioned", "key": "user"},
                {"from": "per_second", "to": "out"},
            ],
        },
        "config": {"members": 1, "local_parallelism": 2,
                   "processing_guarantee": "exactly_once", "snapshot_interval_ms": 500},
    }  # fmt: skip


def open_job(page: Any, job_id: str) -> None:
    page.goto(page.url.split("#")[0] + f"#/jobs/{job_id}")
    page.wait_for_selector("#job-view:not([hidden])")


def wait_for_text(page: Any, selector: str, text: str, timeout_s: float = 30) -> None:
    page.wait_for_function(
        "([sel, t]) => [...document.querySelectorAll(sel)].some(n => n.textContent.includes(t))",
        arg=[selector, text],
        timeout=timeout_s * 1000,
    )


def texts(page: Any, selector: str) -> list[str]:
    found: list[str] = page.eval_on_selector_all(selector, "ns => ns.map(n => n.textContent)")
    return found


def test_a_finished_stream_reads_as_times_a_chart_results_logs_snapshots_and_a_script(
    page: Any, api_url: str, worker: Worker, artifacts_dir: Path
) -> None:
    import httpx

    del worker
    with httpx.Client(base_url=api_url, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        job_id = http.post("/v1/jobs", json=clicks_per_second(int(time.time() * 1000))).json()["id"]
    open_job(page, job_id)
    wait_for_status(page, "COMPLETED", timeout_s=180)

    # Watermarks as local times, lag as a duration: no raw epoch milliseconds.
    rows = page.eval_on_selector_all(
        "#vertices tbody tr", "rs => rs.map(r => [...r.children].map(c => c.textContent))"
    )
    marked = [row for row in rows if row[4] != "-"]
    assert {row[0] for row in marked} >= {"per_second"}, rows
    for row in marked:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}", row[4]), rows
        assert re.fullmatch(r"lag \d+ ms|lag \d+\.\d s|lag \d+ min \d+ s", row[5]), rows
    assert not any(re.search(r"\d{12}", cell) for row in rows for cell in row), rows

    # The chart has a time axis and an items/s axis, and points.
    assert len(page.query_selector_all("#throughput .u-axis")) >= 2
    assert int(page.get_attribute("#throughput", "data-points") or 0) >= 2
    assert "items/s out of the sources" in " ".join(texts(page, "#throughput .u-legend th"))

    # Results in a table, a page at a time.
    page.wait_for_function("() => document.querySelectorAll('#results tbody tr').length === 50")
    header = texts(page, "#results thead th")
    assert "clicks" in header and "window_start" in header
    # Window bounds as local times, their epoch milliseconds in the tooltip.
    starts = page.eval_on_selector_all(
        f"#results tbody tr td:nth-child({header.index('window_start') + 1})",
        "cs => cs.map(c => [c.textContent, c.title])",
    )
    for text, title in starts:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}", text), starts
        assert re.fullmatch(r"\d+ ms · \d{4}-\d{2}-\d{2}T.*Z", title), starts
    assert page.inner_text("#results-range") == "rows 1 to 50"
    page.click("#results-next")
    wait_for_text(page, "#results-range", "rows 51 to 100")

    # The log tail, snapshots with their size, and the SDK script.
    wait_for_text(page, "#logs li", "job claimed")
    wait_for_text(page, "#logs li", "job completed")
    shown, count = page.evaluate(
        "() => [document.querySelectorAll('#logs > li').length,"
        " document.getElementById('logs-count').textContent]"
    )
    assert count == f"{shown} lines logged"
    page.wait_for_selector("#snapshots tbody tr")
    sizes = page.eval_on_selector_all(
        "#snapshots tbody tr td:last-child", "ts => ts.map(t => t.textContent)"
    )
    assert sizes and all(re.fullmatch(r"\d+ B|\d+\.\d (KiB|MiB)", s) for s in sizes), sizes
    wait_for_text(page, "#sdk-source", "from jetspark.sdk import DAG, Edge")
    assert "dag.new_vertex('clicks', 'source.sequence'" in page.inner_text("#sdk-source")
    assert serious_violations(page) == []
    page.screenshot(path=str(artifacts_dir / "status-page-stream.png"), full_page=True)


def test_a_failed_jobs_exception_chain_and_its_processors_lines_are_shown_as_text(
    page: Any, api_url: str, worker: Worker, artifacts_dir: Path
) -> None:
    import httpx

    del worker
    hostile = '<img src=x onerror="window.pwned=1">'
    body = {
        "name": hostile,
        "dag": {
            "vertices": [
                {"name": "items", "processor": "source.items",
                 "params": {"items": [{"value": "fine"}, {"value": hostile}]}},
                {"name": "told", "processor": "python",
                 "params": {"class": "jetspark.example_processors.diagnostics:LogEach"}},
                {"name": "fail_on", "processor": "python",
                 "params": {"class": "jetspark.example_processors.diagnostics:FailOn",
                            "args": {"field": "value", "value": hostile}}},
                {"name": "out", "processor": "sink.results"},
            ],
            "edges": [
                {"from": "items", "to": "told"},
                {"from": "told", "to": "fail_on"},
                {"from": "fail_on", "to": "out"},
            ],
        },
        "config": {"members": 1, "local_parallelism": 1},
    }  # fmt: skip
    with httpx.Client(base_url=api_url, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        job_id = http.post("/v1/jobs", json=body).json()["id"]
    open_job(page, job_id)
    wait_for_status(page, "FAILED")
    assert page.inner_text("#job-name") == hostile
    page.wait_for_selector("#job-error .chain > li")
    chain = texts(page, "#job-error .chain > li > div")
    assert chain[0].startswith("VertexFailed: vertex 'fail_on' failed: ValueError")
    assert any(hostile in link for link in chain), chain
    assert page.query_selector("#job-error .chain details pre") is not None
    # The processor's own lines (logged and printed in its Spark task) are in the log tail.
    wait_for_text(page, "#logs li", f"printed {hostile}")
    wait_for_text(page, "#logs li", "job failed")
    assert page.evaluate("() => window.pwned") is None
    assert serious_violations(page) == []
    page.screenshot(path=str(artifacts_dir / "status-page-failed.png"), full_page=True)
