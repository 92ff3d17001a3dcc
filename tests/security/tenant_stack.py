"""A live API whose tokens are several principals (and an admin), on the session's servers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from api.app import create_app
from jetspark.settings import ApiSettings, TenantSettings
from jetspark.tenants.principals import bare_token_name
from tests.live_server import live_server

QUEUED_QUOTA = 8
SSE_QUOTA = 2


@dataclass(frozen=True)
class Stack:
    url: str
    names: dict[str, str]
    """Role (alice, bob, carol, root, bare) → principal name."""
    tokens: dict[str, str]

    def client(self, role: str, **headers: str) -> httpx.Client:
        auth = {"Authorization": f"Bearer {self.tokens[role]}", **headers}
        return httpx.Client(base_url=self.url, headers=auth, timeout=30)


@pytest.fixture(scope="module", name="stack")
def stack_fixture(database_url: str, redis_url: str, redis_namespace: str) -> Iterator[Stack]:
    run = uuid.uuid4().hex[:6]
    tokens = {
        role: f"{role}-token-{uuid.uuid4().hex}" for role in ("alice", "bob", "carol", "root")
    }
    names = {role: f"{role}-{run}" for role in tokens}
    tokens["bare"] = f"bare-token-{uuid.uuid4().hex}"
    names["bare"] = bare_token_name(tokens["bare"])
    app = create_app(
        database_url=database_url,
        redis_url=redis_url,
        redis_namespace=redis_namespace,
        api_settings=ApiSettings(tokens=[tokens["bare"]], rate_limit_per_s=0),
        tenant_settings=TenantSettings(
            api_principals=[f"{names[r]}:{tokens[r]}" for r in ("alice", "bob", "carol", "root")],
            api_admins=[names["root"]],
            quota_queued_jobs=QUEUED_QUOTA,
            quota_sse_connections=SSE_QUOTA,
        ),
    )
    with live_server(app) as url:
        yield Stack(url, names, tokens)
