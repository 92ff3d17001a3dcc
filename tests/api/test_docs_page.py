"""``/docs`` (Swagger UI) works with no network: every operation of ``/openapi.json`` is listed
from files the API serves itself, and it passes axe's serious and critical rules."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.api.browser import offline_tab, serious_violations

pytestmark = pytest.mark.slow

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def test_the_docs_list_every_endpoint_offline(api_url: str, artifacts_dir: Path) -> None:
    spec = httpx.get(f"{api_url}/openapi.json").json()
    expected = sorted(
        (method.upper(), path)
        for path, operations in spec["paths"].items()
        for method in operations
        if method in METHODS
    )
    assert len(expected) > 20
    with offline_tab() as tab:
        page = tab.page
        response = page.goto(f"{api_url}/docs")
        assert response is not None and response.ok
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_function(
            "n => document.querySelectorAll('.opblock').length >= n",
            arg=len(expected),
            timeout=30_000,
        )
        listed = page.eval_on_selector_all(
            ".opblock",
            """blocks => blocks.map((b) => [
                b.querySelector('.opblock-summary-method').textContent,
                b.querySelector('.opblock-summary-path').dataset.path,
            ])""",
        )
        assert sorted(tuple(pair) for pair in listed) == expected
        assert page.inner_text(".info .title").startswith("jetspark")
        page.screenshot(path=str(artifacts_dir / "docs.png"), full_page=True)
        # One operation opened, as a reader would: its parameters and responses.
        page.click("#operations-jobs-jobs-get .opblock-summary-control")
        page.wait_for_selector("#operations-jobs-jobs-get .responses-table")
        assert serious_violations(page) == []
        assert tab.blocked == [], "the docs asked the internet for something"
        assert tab.errors == []
        assert not [e for e in tab.console_errors if "Content Security Policy" in e]
