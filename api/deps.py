"""Dependencies as Annotated aliases, so route signatures read like prose.

The ones that only look up app state are ``async def``: FastAPI runs a plain ``def``
dependency in the threadpool, a hop that cost the status-read hot path more than the read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from api.auth import require_principal
from api.notifications import JobViewCache
from jetspark.jdbc.connections import JdbcConnections
from jetspark.kafka.clusters import KafkaClusters
from jetspark.queue.keys import Keys
from jetspark.redis_client import RedisClient
from jetspark.settings import (
    ApiSettings,
    DagLimits,
    EngineBounds,
    JobLogSettings,
    TenantSettings,
    WebhookSettings,
)
from jetspark.tenants.principals import Principal
from jetspark.webhooks.targets import TargetPolicy


def _session(request: Request) -> Iterator[Session]:
    with request.app.state.sessions() as session:
        yield session


async def _redis(request: Request) -> RedisClient:
    client: RedisClient = request.app.state.redis
    return client


async def _keys(request: Request) -> Keys:
    keys: Keys = request.app.state.keys
    return keys


async def _api_settings(request: Request) -> ApiSettings:
    settings: ApiSettings = request.app.state.api_settings
    return settings


async def _view_cache(request: Request) -> JobViewCache:
    cache: JobViewCache = request.app.state.listener.cache
    return cache


async def _tenant_settings(request: Request) -> TenantSettings:
    settings: TenantSettings = request.app.state.tenant_settings
    return settings


async def _limits(request: Request) -> DagLimits:
    limits: DagLimits = request.app.state.dag_limits
    return limits


async def _engine_bounds(request: Request) -> EngineBounds:
    bounds: EngineBounds = request.app.state.engine_bounds
    return bounds


async def _job_log_settings(request: Request) -> JobLogSettings:
    settings: JobLogSettings = request.app.state.job_log_settings
    return settings


async def _webhook_settings(request: Request) -> WebhookSettings:
    settings: WebhookSettings = request.app.state.webhook_settings
    return settings


async def _jdbc_connections(request: Request) -> JdbcConnections:
    connections: JdbcConnections = request.app.state.jdbc_connections
    return connections


async def _kafka_clusters(request: Request) -> KafkaClusters:
    clusters: KafkaClusters = request.app.state.kafka_clusters
    return clusters


async def _webhook_targets(request: Request) -> TargetPolicy:
    policy: TargetPolicy = request.app.state.webhook_targets
    return policy


SessionDep = Annotated[Session, Depends(_session)]
RedisDep = Annotated[RedisClient, Depends(_redis)]
KeysDep = Annotated[Keys, Depends(_keys)]
PrincipalDep = Annotated[Principal, Depends(require_principal)]
"""The authenticated principal (401 without a valid bearer token)."""
TenantSettingsDep = Annotated[TenantSettings, Depends(_tenant_settings)]
ApiSettingsDep = Annotated[ApiSettings, Depends(_api_settings)]
LimitsDep = Annotated[DagLimits, Depends(_limits)]
EngineBoundsDep = Annotated[EngineBounds, Depends(_engine_bounds)]
JobLogSettingsDep = Annotated[JobLogSettings, Depends(_job_log_settings)]
ViewCacheDep = Annotated[JobViewCache, Depends(_view_cache)]
WebhookSettingsDep = Annotated[WebhookSettings, Depends(_webhook_settings)]
WebhookTargetsDep = Annotated[TargetPolicy, Depends(_webhook_targets)]
JdbcConnectionsDep = Annotated[JdbcConnections, Depends(_jdbc_connections)]
KafkaClustersDep = Annotated[KafkaClusters, Depends(_kafka_clusters)]
"""The operator's Kafka clusters (``JETSPARK_KAFKA_CLUSTERS``) and their topic rules."""
"""The operator's JDBC connections (``JETSPARK_JDBC_CONNECTIONS``), names and principals."""
