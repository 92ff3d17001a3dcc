"""Headless Chromium (Debian's, driven by Playwright) for the page tests: offline, with axe.

Every request to a host other than loopback is aborted and recorded, so a page that needs the
internet (a CDN script, a validator badge, a web font) fails its test. axe-core (vendored,
``tests/api/vendor``) is injected into every page by an init script, which the page's
Content-Security-Policy does not apply to.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

AXE = Path(__file__).resolve().parent / "vendor" / "axe-core-4.14.1.min.js"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
BLOCKING_IMPACTS = frozenset({"serious", "critical"})
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


@dataclass
class Browser:
    """One tab, and what it did that it should not have."""

    page: Any
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)


@contextmanager
def offline_tab(*, width: int = 1280, height: int = 900) -> Iterator[Browser]:
    """A tab that reaches loopback only, with axe loaded in every document."""
    from playwright.sync_api import Request, Route, sync_playwright

    executable = chromium_path()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        context = browser.new_context(viewport={"width": width, "height": height})
        tab = Browser(context.new_page())

        def local_only(route: Route, request: Request) -> None:
            if urlsplit(request.url).hostname in LOOPBACK:
                route.continue_()
            else:
                tab.blocked.append(request.url)
                route.abort("internetdisconnected")

        context.route("**/*", local_only)
        context.add_init_script(path=str(AXE))
        tab.page.on("pageerror", lambda error: tab.errors.append(str(error)))
        tab.page.on(
            "console",
            lambda message: (
                tab.console_errors.append(message.text) if message.type == "error" else None
            ),
        )
        try:
            yield tab
        finally:
            browser.close()


def serious_violations(page: Any, *, exclude: list[str] | None = None) -> list[str]:
    """axe's serious and critical violations on the page as it is, one line each."""
    found: list[dict[str, Any]] = page.evaluate(
        """async (exclude) => {
            const context = exclude.length ? { exclude: exclude.map((s) => [s]) } : document;
            const result = await axe.run(context, { resultTypes: ["violations"] });
            return result.violations;
        }""",
        exclude or [],
    )
    return [
        f"{v['impact']} {v['id']}: {v['help']} — "
        + "; ".join(" ".join(node["target"]) for node in v["nodes"][:5])
        for v in found
        if v.get("impact") in BLOCKING_IMPACTS
    ]
