"""The app factory: state, middleware, routers and the one error mapping."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.routing import APIRoute
from prometheus_client import CollectorRegistry
from sqlalchemy.engine import make_url

import jetspark
from api.middleware import BodySizeLimit, RateLimit
from api.notifications import JobChangeListener
from api.problems import install_problem_handlers
from api.prometheus import JobServerCollector, RequestMetrics
from api.routers import (
    dag_view,
    dags,
    deliveries,
    docs,
    events,
    health,
    jobs,
    logs,
    metrics,
    partitions,
    scrape,
    sdk_source,
    snapshots,
    web,
)
from api.webhooks import Deliverer
from jetspark.db.engine import make_engine, make_session_factory, normalize_url
from jetspark.jdbc.connections import JdbcConnections
from jetspark.kafka.clusters import KafkaClusters
from jetspark.queue.keys import Keys
from jetspark.redis_client import connect_async, fail_fast
from jetspark.settings import (
    ApiSettings,
    DagLimits,
    DatabaseSettings,
    EngineBounds,
    JdbcSettings,
    JobLogSettings,
    KafkaSettings,
    RedisSettings,
    RetrySettings,
    SupervisorSettings,
    TenantSettings,
    WebhookSettings,
)
from jetspark.tenants.principals import PrincipalDirectory
from jetspark.tenants.quotas import SharedConnectionSlots
from jetspark.tenants.rate_limit import SharedRateLimit, limiter_client
from jetspark.webhooks.targets import TargetPolicy

TITLE = "jetspark"
DESCRIPTION = "A REST job server that runs Hazelcast Jet-style dataflow DAGs on Apache Spark."


def operation_id(route: APIRoute) -> str:
    """Stable operation ids, ``tag-name``, set explicitly on every route."""
    return route.operation_id or f"{route.tags[0]}-{route.name}"


def _libpq_dsn(url: str) -> str:
    return (
        make_url(normalize_url(url))
        .set(drivername="postgresql")
        .render_as_string(hide_password=False)
    )


def create_app(
    *,
    database_url: str | None = None,
    redis_url: str | None = None,
    redis_namespace: str | None = None,
    redis_cluster: bool | None = None,
    api_settings: ApiSettings | None = None,
    dag_limits: DagLimits | None = None,
    tenant_settings: TenantSettings | None = None,
    webhook_settings: WebhookSettings | None = None,
    engine_bounds: EngineBounds | None = None,
    job_log_settings: JobLogSettings | None = None,
    retry_settings: RetrySettings | None = None,
    jdbc_settings: JdbcSettings | None = None,
    kafka_settings: KafkaSettings | None = None,
) -> FastAPI:
    """Build the app; arguments override the environment (``JETSPARK_*``).

    Every setting the API uses is read here, once per app (reading the environment and
    ``.env`` costs more than answering a request); a test that needs other settings builds
    an app with them.
    """
    database = DatabaseSettings()
    database_url = database_url or database.url
    redis_settings = RedisSettings()
    redis_url = redis_url or redis_settings.url
    if not database_url or not redis_url:
        raise RuntimeError(
            "set JETSPARK_DATABASE_URL and JETSPARK_REDIS_URL (or run `jetspark up`)"
        )
    settings = api_settings or ApiSettings()
    tenants = tenant_settings or TenantSettings()
    bounds = engine_bounds or EngineBounds()
    principals = PrincipalDirectory.of_settings(
        tokens=settings.tokens, principals=tenants.api_principals, admins=tenants.api_admins
    )
    engine = make_engine(database_url, pool_size=database.pool_size)
    listener = JobChangeListener(
        _libpq_dsn(database_url), cache_max_age_s=settings.view_cache_max_age_s
    )
    webhooks = webhook_settings or WebhookSettings()
    targets = TargetPolicy(webhooks)
    sessions = make_session_factory(engine)
    deliverer = (
        Deliverer(sessions, listener, webhooks, targets)
        if webhooks.deliver and webhooks.secret
        else None
    )

    cluster = redis_settings.cluster if redis_cluster is None else redis_cluster
    keys = Keys(redis_namespace or redis_settings.namespace)
    limiter = (
        SharedRateLimit(
            limiter_client(redis_url, cluster=cluster),
            keys,
            per_s=settings.rate_limit_per_s,
            burst=settings.rate_limit_burst,
        )
        if settings.rate_limit_per_s > 0
        else None
    )
    aioredis = connect_async(redis_url, cluster=cluster, decode_responses=True)
    # The limiter and the stream quota give up on Redis within TIMEOUT_S and count in this
    # process meanwhile: a request never waits on a Redis that is away.
    sse_slots = SharedConnectionSlots(
        limiter_client(redis_url, cluster=cluster), keys, tenants.quota_sse_connections
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await listener.start()
        sse_slots.start()
        if deliverer is not None:
            await deliverer.start()
        yield
        if deliverer is not None:
            await deliverer.stop()
        await sse_slots.stop()
        await listener.stop()
        app.state.redis.close()
        await app.state.aioredis.aclose()
        await sse_slots.client.aclose()
        if limiter is not None:
            await limiter.aclose()
        engine.dispose()

    app = FastAPI(
        title=TITLE,
        description=DESCRIPTION,
        version=jetspark.__version__,
        lifespan=lifespan,
        generate_unique_id_function=operation_id,
        # /docs is ours (api.routers.docs): FastAPI's loads Swagger UI from a CDN.
        docs_url=None,
        redoc_url=None,
    )
    app.state.sessions = sessions
    # A Redis that is down fails a request within seconds: submissions go on without it
    # (PostgreSQL holds them), what needs it answers 503.
    app.state.redis = fail_fast(redis_url, cluster=cluster)
    app.state.aioredis = aioredis
    app.state.keys = keys
    app.state.api_settings = settings
    app.state.dag_limits = dag_limits or DagLimits()
    app.state.tenant_settings = tenants
    app.state.engine_bounds = bounds
    # An unusable setting stops the API here, naming it (JdbcConfigError), never a secret.
    jdbc = jdbc_settings or JdbcSettings()
    app.state.jdbc_connections = JdbcConnections.parse(jdbc.connections)
    app.state.kafka_clusters = KafkaClusters.parse((kafka_settings or KafkaSettings()).clusters)
    app.state.job_log_settings = job_log_settings or JobLogSettings()
    app.state.retry_settings = retry_settings or RetrySettings()
    app.state.principals = principals
    app.state.sse_slots = sse_slots
    app.state.listener = listener
    app.state.webhook_settings = webhooks
    app.state.webhook_targets = targets
    install_problem_handlers(app)
    # The routes clients and load balancers call many times a second (the job view, the
    # health checks) sit in the app's own route list, matched first: FastAPI matches an
    # included router's routes through a wrapper, twice per request, which cost more than
    # answering. Their routers built them (paths, tags, responses) as for any router.
    for hot in (jobs.views, health.router):
        app.router.routes.extend(hot.routes)
    for router in (
        jobs.router,
        snapshots.router,
        logs.router,
        deliveries.router,
        sdk_source.router,
        events.router,
        metrics.router,
        dag_view.router,
        dags.router,
        partitions.router,
        scrape.router,
        web.router,
        docs.router,
    ):
        app.include_router(router)
    app.mount("/static", web.static_files, name="static")
    if limiter is not None:  # off: not a layer every request passes through
        app.add_middleware(RateLimit, limiter=limiter, principals=principals)
    app.add_middleware(
        BodySizeLimit, max_bytes=settings.max_body_bytes, max_depth=bounds.json_depth
    )
    app.state.registry = CollectorRegistry()
    app.state.registry.register(
        JobServerCollector(
            app.state.sessions,
            app.state.redis,
            app.state.keys,
            restarts_file=SupervisorSettings().state_file,
        )
    )
    app.add_middleware(RequestMetrics, registry=app.state.registry)  # outermost: sees 413/429
    return app
