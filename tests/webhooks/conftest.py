"""A database of the webhook tests' own, and live APIs configured per test."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from api.app import create_app
from jetspark.db.engine import make_engine
from jetspark.settings import ApiSettings, TenantSettings, WebhookSettings
from tests.databases import fresh_database
from tests.live_server import live_server

SECRET = "test-webhook-secret"
TOKENS = {"alice": "alice-token", "bob": "bob-token"}
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "word-count.json"
LOOPBACK = ["127.0.0.1/32"]

Serve = Callable[..., AbstractContextManager[str]]


@pytest.fixture(scope="module")
def hooks_database_url(server_database_url: str) -> Iterator[str]:
    """Deliverers take every due row of their database: these tests keep to their own."""
    with fresh_database(server_database_url, "jetspark_webhooks") as url:
        yield url


@pytest.fixture(scope="module")
def hooks_engine(hooks_database_url: str) -> Iterator[Engine]:
    engine = make_engine(hooks_database_url, pool_size=3)
    yield engine
    engine.dispose()


@pytest.fixture
def sessions(hooks_engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(hooks_engine, expire_on_commit=False)


def settings(**overrides: Any) -> WebhookSettings:
    """Fast retries, a secret; overrides as given (``allowed_hosts`` for loopback)."""
    values: dict[str, Any] = {
        "secret": SECRET,
        "backoff_initial_s": 0.05,
        "backoff_max_s": 0.2,
        "timeout_s": 5.0,
        "poll_s": 0.5,
    }
    return WebhookSettings(**(values | overrides))


@pytest.fixture
def serve(hooks_database_url: str, redis_url: str) -> Serve:
    """``with serve(**webhook settings) as base_url``: a live API on the tests' database."""
    namespace = f"jetspark-hooks-{uuid.uuid4().hex[:8]}"

    @contextmanager
    def run(**overrides: Any) -> Iterator[str]:
        app = create_app(
            database_url=hooks_database_url,
            redis_url=redis_url,
            redis_namespace=namespace,
            api_settings=ApiSettings(tokens=[]),
            tenant_settings=TenantSettings(
                api_principals=[f"{name}:{token}" for name, token in TOKENS.items()]
            ),
            webhook_settings=settings(**overrides),
        )
        with live_server(app) as url:
            yield url

    return run


def client(base_url: str, principal: str = "alice") -> httpx.Client:
    headers = {"Authorization": f"Bearer {TOKENS[principal]}"}
    return httpx.Client(base_url=base_url, headers=headers, timeout=30)


def job_body(*notify: str, name: str = "hooked") -> dict[str, Any]:
    body: dict[str, Any] = copy.deepcopy(json.loads(EXAMPLE.read_text()))
    body["name"] = name
    body.setdefault("config", {})["notify"] = list(notify)
    return body
