"""The rate limit against a live API: keyed on who a token is, not on how it is spelled."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from api.app import create_app
from jetspark.settings import ApiSettings, TenantSettings
from jetspark.tenants.rate_limit import LocalBuckets
from tests.live_server import live_server

BURST = 5
TOKEN = f"rate-{uuid.uuid4().hex}"
OTHER = f"rate-other-{uuid.uuid4().hex}"
SPELLINGS = ["Bearer", "bearer", "BEARER", "bEaReR", "BeArEr", "bearer", "Bearer", "BEARer"]


@pytest.fixture(scope="module")
def api(database_url: str, redis_url: str, redis_namespace: str) -> Iterator[str]:
    app = create_app(
        database_url=database_url,
        redis_url=redis_url,
        redis_namespace=redis_namespace,
        # Slow refill: the test's requests cannot earn a token back while it runs.
        api_settings=ApiSettings(tokens=[TOKEN], rate_limit_per_s=0.01, rate_limit_burst=BURST),
        tenant_settings=TenantSettings(api_principals=[f"other:{OTHER}"]),
    )
    with live_server(app) as url:
        yield url


def test_eight_spellings_of_bearer_are_one_principal_and_get_429(api: str) -> None:
    statuses = []
    with httpx.Client(base_url=api, timeout=30) as http:
        for scheme in SPELLINGS:
            response = http.get("/v1/jobs", headers={"Authorization": f"{scheme} {TOKEN}"})
            statuses.append(response.status_code)
        assert statuses == [200] * BURST + [429] * (len(SPELLINGS) - BURST)
        refused = http.get("/v1/jobs", headers={"Authorization": f"bearer {TOKEN}"})
        assert refused.headers["content-type"] == "application/problem+json"
        assert int(refused.headers["Retry-After"]) >= 1
        # Another principal has its own bucket.
        other = http.get("/v1/jobs", headers={"Authorization": f"Bearer {OTHER}"})
        assert other.status_code == 200


def test_the_rate_limit_is_on_by_default() -> None:
    assert ApiSettings().rate_limit_per_s > 0


def test_local_buckets_are_pruned_so_memory_stays_bounded() -> None:
    """The limit kept in memory while Redis is away cannot be grown without bound."""
    limit = LocalBuckets(per_s=1.0, burst=10, max_buckets=100)
    for n in range(10_000):
        limit.allow(f"a:10.0.{n // 256}.{n % 256}")
        assert len(limit.buckets) <= 100
