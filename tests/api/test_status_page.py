"""The web status page in headless Chromium (Debian's, driven by Playwright) against the real
API and a real worker: submit a DAG and watch it complete, cancel another, names escaped.

Screenshots are kept in ``test-artifacts/``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import TOKEN
from tests.worker.conftest import LONG_JOB
from worker.loop import Worker

pytestmark = [pytest.mark.slow, pytest.mark.spark]

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("chromium is missing: `make test` installs it (apt-get install chromium)")
    pytest.skip("no chromium on this machine (make test installs it where it can)")


@pytest.fixture
def page(api_url: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        tab = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        tab.on("pageerror", lambda error: errors.append(str(error)))
        tab.goto(f"{api_url}/")
        tab.fill("#token", TOKEN)
        tab.click("#token-form button")
        tab.wait_for_selector("#list-view:not([hidden])")
        yield tab
        browser.close()
        assert not errors, f"the page raised: {errors}"


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
    drawn = page.eval_on_selector_all("#dag .vertex", "gs => gs.map(g => g.dataset.vertex)")
    assert sorted(drawn) == sorted(v["name"] for v in word_count["dag"]["vertices"])
    edges = page.eval_on_selector_all("#dag .edge text", "ts => ts.map(t => t.textContent)")
    assert "partitioned(word)" in edges
    wait_for_status(page, "COMPLETED")
    history = page.inner_text("#history")
    assert "RUNNING → COMPLETED" in history or "COMPLETING → COMPLETED" in history
    page.screenshot(path=str(artifacts_dir / "status-page-completed.png"), full_page=True)

    endless = submit_through_page(page, {**LONG_JOB, "name": "endless"})
    wait_for_status(page, "RUNNING")
    page.click("#job-view [data-action=cancel]")
    wait_for_status(page, "CANCELLED", timeout_s=30)
    page.screenshot(path=str(artifacts_dir / "status-page-cancelled.png"), full_page=True)

    page.goto(page.url.split("#")[0] + "#/")
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
    page.screenshot(path=str(artifacts_dir / "status-page-list.png"), full_page=True)
