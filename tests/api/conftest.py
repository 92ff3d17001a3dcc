"""A real uvicorn serving the app against the session's PostgreSQL and Redis."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from jetspark.settings import ApiSettings
from tests.live_server import live_server

TOKEN = "test-token-1"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "word-count.json"


@pytest.fixture(scope="session")
def api_app(database_url: str, redis_url: str, redis_namespace: str) -> FastAPI:
    return create_app(
        database_url=database_url,
        redis_url=redis_url,
        redis_namespace=redis_namespace,
        api_settings=ApiSettings(tokens=[TOKEN], max_body_bytes=64 * 1024),
    )


@pytest.fixture(scope="session")
def api_url(api_app: FastAPI) -> Iterator[str]:
    with live_server(api_app) as url:
        yield url


@pytest.fixture
def http(api_url: str) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=api_url, headers=headers, timeout=30) as client:
        yield client


@pytest.fixture
def word_count() -> dict[str, Any]:
    body: dict[str, Any] = json.loads(EXAMPLE.read_text())
    return copy.deepcopy(body)
