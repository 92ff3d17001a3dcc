"""Cancel the jobs a test module left waiting.

The session database is shared with tests/worker, whose reconciler re-announces every old
QUEUED job; jobs left behind here would crowd what those tests read from the stream.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.api.conftest import TOKEN


def cancel_unfinished(api_url: str) -> int:
    """Cancel every QUEUED or SUSPENDED job; returns how many."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    cancelled = 0
    with httpx.Client(base_url=api_url, headers=headers, timeout=30) as http:
        cursor: str | None = None
        while True:
            params: dict[str, str | int | list[str]] = {
                "status": ["QUEUED", "SUSPENDED"],
                "limit": 200,
            }
            if cursor:
                params["cursor"] = cursor
            page = http.get("/v1/jobs", params=params)
            page.raise_for_status()
            for job in page.json()["items"]:
                # 409 when something else moved it meanwhile: then it is not waiting either.
                if http.post(f"/v1/jobs/{job['id']}/cancel").status_code == 200:
                    cancelled += 1
            cursor = page.json()["next_cursor"]
            if cursor is None:
                return cancelled


@pytest.fixture(scope="module")
def no_leftovers(api_url: str) -> Iterator[None]:
    """Use as a module's autouse fixture: cancels what the module left waiting."""
    yield
    cancel_unfinished(api_url)
