"""Settings, one pydantic-settings class per subsystem; the env prefix follows the subsystem.

``JETSPARK_DATABASE_URL`` is ``DatabaseSettings().url``, ``JETSPARK_API_TOKENS`` is
``ApiSettings().tokens``, and so on. An unset URL means "start the embedded server".
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BeforeValidator, Field
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


def _split_csv(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


CsvList = Annotated[list[str], NoDecode, BeforeValidator(_split_csv)]
"""A list given in the environment as comma-separated values."""

DEBIAN_POSTGRESQL_JAR = "/usr/share/java/postgresql.jar"
"""Where Debian's ``libpostgresql-jdbc-java`` puts PostgreSQL's JDBC driver."""


class HomeSettings(BaseSettings):
    """Where the embedded servers and the generated token live (``JETSPARK_HOME``)."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_")

    home: Path = Path(".jetspark")
    """Where ``jetspark up`` keeps the embedded servers' data, the token and its logs."""


class DatabaseSettings(BaseSettings):
    """PostgreSQL holding job state and snapshot metadata."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_DATABASE_")

    url: str | None = None
    """PostgreSQL, e.g. ``postgresql://user:pw@db:5432/jetspark``; unset, ``jetspark up``
    starts an embedded server."""
    pool_size: int = 10
    """Connections the API keeps open to PostgreSQL (per API process)."""


class RedisSettings(BaseSettings):
    """Redis holding the job stream, live metrics and snapshot data."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_REDIS_")

    url: str | None = None
    """Redis >= 6.2 (or Valkey), e.g. ``redis://cache:6379/0``; unset, ``jetspark up`` starts
    an embedded Valkey."""
    namespace: str = "jetspark"
    """Prefix of every Redis key: several installations may share one Redis."""
    cluster: bool = False
    """``JETSPARK_REDIS_CLUSTER``: ``url`` names one node of a Redis Cluster; every client is
    a cluster client (``jetspark.redis_client``)."""


class SparkSettings(BaseSettings):
    """The SparkSession each worker keeps warm."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_SPARK_")

    master: str = "local[*]"
    """Spark master of each worker's session (``local[*]``, ``spark://host:7077``, ...)."""
    app_name: str = "jetspark-worker"
    """Spark application name of each worker's session."""
    shuffle_partitions: int = 8
    """``spark.sql.shuffle.partitions`` of the workers' sessions (batch jobs; a stream's
    epochs shuffle into one partition per core)."""
    conf: str | None = None
    """``JETSPARK_SPARK_CONF``: a JSON object of Spark properties (``jetspark.spark_conf``)."""
    conf_file: Path | None = None
    """``JETSPARK_SPARK_CONF_FILE``: a ``spark-defaults.conf``-style file of properties; the
    JSON object wins on a key both name."""
    ship_code: bool | None = None
    """``JETSPARK_SPARK_SHIP_CODE``: send the engine, the allowed processor modules and their
    libraries to the executors at start (``worker.executor_code``); unset, only when the
    master is not local (a local master's tasks run this installation)."""
    ui_port: int | None = Field(default=None, ge=1, le=65535)
    """``JETSPARK_SPARK_UI_PORT``: run Spark's own UI on this port of each worker (off when
    unset). It shows every tenant's jobs and the worker's environment and has no login: an
    operator's tool, bound where ``SPARK_LOCAL_IP`` says (loopback on a local master), to be
    reached through an authenticating proxy only (docs/SECURITY.md). Its kill links are off."""


class DagLimits(BaseSettings):
    """Size limits applied when a DAG is validated."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_DAG_")

    max_vertices: int = 256
    """Vertices one DAG may have."""
    max_edges: int = 1024
    """Edges one DAG may have."""
    max_parallelism: int = 256
    """Largest ``members`` and ``local_parallelism`` a job or vertex may ask for."""
    allowed_python_modules: CsvList = Field(default_factory=lambda: ["jetspark.example_processors"])
    """Modules ``python`` processors may come from (comma-separated; a module's submodules
    too)."""


SparkUiUrl = Annotated[str, Field(max_length=2048, pattern=r"^https?://[^\s\"'<>]+$")]
"""An http(s) URL without spaces or quotes (the page puts it in a link's ``href``)."""


class ApiSettings(BaseSettings):
    """The HTTP control plane."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_API_")

    tokens: CsvList = Field(default_factory=list)
    """Bearer tokens, comma-separated, each a principal of its own; ``jetspark up`` generates
    one when unset."""
    max_body_bytes: int = 1024 * 1024
    """Larger request bodies get 413."""
    rate_limit_per_s: float = 50.0
    """Requests per second allowed per principal (per client address before it has
    authenticated); 0 turns the limit off."""
    rate_limit_burst: int = 200
    """Requests a principal may make at once above the rate."""
    long_poll_max_s: float = 60.0
    """Longest ``wait_s`` of ``GET /v1/jobs/{id}`` (a longer one waits this long)."""
    results_page_max: int = 1000
    """Records one ``GET /v1/jobs/{id}/results`` returns at most."""
    view_cache_max_age_s: float = Field(default=1.0, ge=0)
    """How long a job view may be served from an API
    process's memory at most. Views are dropped as soon as PostgreSQL NOTIFYs their job's
    change; this bounds a view should a NOTIFY ever be missed. 0 turns the cache off."""
    spark_ui_url: SparkUiUrl | None = None
    """Where operators reach Spark's UI or History Server, through their authenticating proxy
    (``{application}`` in it stands for a job's Spark application id): set, the page links
    each of a job's Spark jobs and stages there. The link grants nothing: the proxy decides
    who sees Spark's UI (docs/SECURITY.md)."""


class JobLogSettings(BaseSettings):
    """Per-job logs (``GET /v1/jobs/{id}/logs``)."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_JOB_LOGS_")

    max_lines: int = Field(default=10_000, ge=1)
    """Lines kept per job; older ones are dropped."""
    max_line_chars: int = Field(default=8_000, ge=100)
    """A field, message or traceback of a line is cut to this length."""
    page_max: int = Field(default=1_000, ge=1)
    """Lines one ``GET /v1/jobs/{id}/logs`` returns at most."""
    task_max_lines: int = Field(default=1_000, ge=1)
    """Lines one Spark task (a Python processor's logging and print) may add to its job's
    log; past it, one line says how many more were left out."""
    ttl_s: int = Field(default=15 * 24 * 3600, ge=60)
    """A job's log is dropped this long after its last line: longer than retention keeps a
    failed job, so deleting a job drops its log, and a line a stopping worker writes after
    its job was deleted does not stay in Redis for ever."""


class RetentionSettings(BaseSettings):
    """How long finished jobs are kept (``jetspark.jobs.retention``): as Jet, 7 days and
    1,000 jobs by default; failures twice as long, to be looked into."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_RETENTION_")

    enabled: bool = True
    """Workers sweep finished jobs (``JETSPARK_RETENTION_ENABLED``)."""
    completed_s: float = Field(default=7 * 24 * 3600.0, gt=0)
    """A COMPLETED job is deleted this long after it finished."""
    failed_s: float = Field(default=14 * 24 * 3600.0, gt=0)
    """A FAILED job is deleted this long after it finished."""
    cancelled_s: float = Field(default=7 * 24 * 3600.0, gt=0)
    """A CANCELLED job is deleted this long after it finished."""
    max_jobs: int = Field(default=1_000, ge=0)
    """Finished jobs kept per principal (0: no limit); beyond it, the earliest finished go.
    Per principal, not in all: one principal's many jobs never delete another's."""
    interval_s: float = Field(default=60.0, gt=0)
    """How often a worker sweeps (one sweep at a time among all workers)."""
    batch: int = Field(default=100, ge=1, le=10_000)
    """Jobs deleted per transaction; a full batch is followed by another at once."""


class WorkerSettings(BaseSettings):
    """Workers: leases, heartbeats, concurrency."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_WORKER_")

    lease_s: float = 15.0
    """A worker that stops renewing its lease this long loses its jobs to another worker."""
    heartbeat_s: float = 1.0
    """How often a worker renews its leases and checks for cancel, suspend and restart."""
    max_concurrent_jobs: int = 2
    """Jobs one worker runs at once."""
    takeover_slots: int = Field(default=1, ge=0, le=16)
    """Jobs a worker runs beyond ``max_concurrent_jobs`` only when they ran before (a lost
    worker's streams, requeued): a takeover does not wait for a busy worker's free slot, as
    Jet restarts a lost member's jobs at once; 0: takeovers wait like any job."""
    poll_block_ms: int = 1000
    """Longest wait of one read of the job stream (at most a heartbeat)."""
    reconcile_interval_s: float = 5.0
    """How often one of the workers compares the queue in Redis with PostgreSQL's QUEUED jobs
    (one at a time among all workers)."""
    reannounce_after_s: float = 10.0
    """A job QUEUED this long that Redis does not know is announced again (after a Redis
    restart, say)."""
    metrics_enabled: bool = True
    """Live job metrics (``JETSPARK_WORKER_METRICS_ENABLED``); off, only counts are kept."""
    metrics_interval_s: float = 0.5
    """How often a running job's metrics document is published."""

    # -- claiming promptly (issue 16) -----------------------------------------------------
    claim_wait_s: float = 1.0
    """How long a claim waits for a job row another transaction holds; still held, the
    stream entry is kept and tried again rather than dropped."""
    claim_unannounced_after_s: float = 0.5
    """An idle worker claims jobs QUEUED this long straight from PostgreSQL, so a lost
    announcement costs one poll (``JETSPARK_WORKER_CLAIM_UNANNOUNCED_AFTER_S``)."""
    busy_retries: int = 5
    """How often an entry whose row stayed locked is tried again before it is dropped (the
    poll above still finds the job if it is queued)."""

    # -- noticing a dead worker at once (issue 24, ``jetspark.jobs.liveness``) ----------------
    liveness_interval_s: float = Field(default=0.25, gt=0)
    """How often a worker beats on its liveness session and looks for lost workers."""
    liveness_lost_after_s: float = Field(default=0.5, gt=0)
    """A worker whose liveness lock is free and whose beat is this old is lost: its jobs are
    requeued at once (the lease still judges a worker that is hung but whose session lives)."""
    warm_up: bool = True
    """Run a small stream at start, before taking jobs (``worker/warm_up.py``): the first
    epochs of a stream it takes over do not pay the JVM's and Spark's first-run costs."""
    yield_to_takeovers_s: float = Field(default=20.0, ge=0)
    """A new worker waits at most this long before starting Spark while another worker is
    taking over the jobs of a lost worker of the same host (its JVM's start would take the
    CPU the takeover needs); 0: it never waits."""
    keep_warm_s: float = Field(default=45.0, ge=0)
    """An idle worker runs a one-row Python task this often (0: never), so that Spark, which
    stops Python workers idle for a minute, keeps them warm for the next job."""
    liveness_settle_s: float = Field(default=3.0, ge=0)
    """After PostgreSQL (re)started, or a judge's own liveness session did, nobody is judged
    for this long: every worker's lock went with the old sessions and is taken again."""


class StreamSettings(BaseSettings):
    """The epoch engine of streaming jobs."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_STREAM_")

    epoch_interval_ms: int = 1000
    """Epoch length of streaming jobs whose config sets no ``epoch_interval_ms``; snapshots
    are taken apart from epochs, every ``snapshot_interval_ms``."""
    max_items_per_epoch: int = Field(default=2_000_000, ge=1)
    """What a source may read in one epoch at most (a backlog is worked off over several)."""
    epoch_target_ms: int = Field(default=1000, ge=0, le=600_000)
    """How long an epoch of a backlogged stream should take (at least its epoch interval):
    each source's items per epoch follow the time the last full epochs took, up to
    ``max_items_per_epoch``, so the next snapshot and results are never far away (as
    Flink's buffer debloating aims at 1 s); 0: every epoch may read ``max_items_per_epoch``."""
    snapshot_history: int = Field(default=100, ge=1, le=10_000)
    """Snapshots kept per job in its snapshot history (``GET /v1/jobs/{id}/snapshots``):
    committed, failed and abandoned ones, the newest first; older records are dropped."""


# --- Tenants (issue 11): principals, admins and per-principal quotas ------------------------
class TenantSettings(BaseSettings):
    """Who tokens are and how much each may use; see docs/SECURITY.md."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_")

    api_principals: CsvList = Field(default_factory=list)
    """``JETSPARK_API_PRINCIPALS``: ``name:token`` entries, comma-separated."""
    api_admins: CsvList = Field(default_factory=list)
    """``JETSPARK_API_ADMINS``: principals that see and act on every principal's jobs."""
    quota_queued_jobs: int = Field(default=100, ge=0)
    """Jobs a principal may have QUEUED at once (submissions past it: 429); 0: no limit."""
    quota_running_jobs: int = Field(default=4, ge=0)
    """Jobs of a principal workers hold at once (STARTING, RUNNING, COMPLETING); the rest
    wait QUEUED while other principals' jobs are claimed; 0: no limit."""
    quota_sse_connections: int = Field(default=16, ge=0)
    """Server-Sent Events connections a principal may keep open at once; 0: no limit."""


# --- Hostile DAGs (issue 11, sec-engine): files, expression sizes, result bytes -------------


class DataSettings(BaseSettings):
    """Where ``source.files`` may read and ``sink.files`` may write (``JETSPARK_DATA_ROOTS``).

    Every path must resolve (symlinks, ``..``) under one of ``roots``; an empty list means
    ``<home>/data``. A URI scheme other than ``file`` is allowed only when listed in
    ``schemes`` and a root with that scheme (``s3a://bucket/prefix``) is listed too.
    """

    model_config = SettingsConfigDict(env_prefix="JETSPARK_DATA_")

    roots: CsvList = Field(default_factory=list)
    """Folders (or ``scheme://`` prefixes) ``source.files``/``sink.files`` paths must resolve
    under, comma-separated; unset: ``<JETSPARK_HOME>/data``."""
    schemes: CsvList = Field(default_factory=lambda: ["file"])
    """URI schemes allowed in those paths (others only with a root of that scheme)."""

    def root_list(self) -> list[str]:
        """The roots, the default one when none is set."""
        return list(self.roots) or [str(HomeSettings().home.expanduser().resolve() / "data")]


class JdbcSettings(BaseSettings):
    """Databases ``source.jdbc`` and ``sink.jdbc`` may use (``JETSPARK_JDBC_*``); see
    ``jetspark.jdbc.connections`` and docs/SECURITY.md."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_JDBC_")

    connections: str | None = None
    """``JETSPARK_JDBC_CONNECTIONS``: a JSON object, connection name -> ``url``, ``user`` (or
    ``user_env``), ``password_env`` or ``password_file``, ``principals`` (``["*"]``: any) and
    an optional ``driver`` class. DAGs name connections; credentials stay here."""
    driver_jars: CsvList = Field(default_factory=lambda: [DEBIAN_POSTGRESQL_JAR])
    """JDBC driver jars the workers' Spark loads (``spark.jars`` and the driver's class path),
    comma-separated; a listed jar that is missing is skipped with a warning. The default is
    Debian's ``libpostgresql-jdbc-java`` (``make jdbc-driver`` installs it)."""


class KafkaSettings(BaseSettings):
    """Kafka clusters ``source.kafka`` and ``sink.kafka`` may use (``JETSPARK_KAFKA_*``); see
    ``jetspark.kafka.clusters`` and docs/SECURITY.md."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_KAFKA_")

    clusters: str | None = None
    """``JETSPARK_KAFKA_CLUSTERS``: a JSON object, cluster name -> ``bootstrap``
    (``host:port,...``) and ``topics`` (principal or ``*`` -> topic names and ``prefix*``
    patterns it may read and write). DAGs name clusters and topics, never brokers."""


class ExpressionLimits(BaseSettings):
    """How big one expression may make a value (``JETSPARK_EXPRESSION_MAX_SIZE``): the
    characters of ``repeat``/``space``/``lpad``/``rpad``, the elements of ``array_repeat``
    and ``sequence``. Literal sizes are refused at validation, others fail the job at run
    time."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_EXPRESSION_")

    max_size: int = Field(default=1_000_000, ge=1)
    """Characters or elements one ``repeat``, ``lpad``, ``sequence``, ... may make."""


class ResultLimits(BaseSettings):
    """Bytes ``sink.results`` keeps (``JETSPARK_RESULTS_MAX_ITEM_BYTES``, ``..._JOB_BYTES``):
    an item over the first, or a job's results over the second, fails the job."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_RESULTS_")

    max_item_bytes: int = Field(default=64 * 1024, ge=1)
    """Bytes of one ``sink.results`` item, encoded; a larger one fails the job."""
    max_job_bytes: int = Field(default=16 * 1024 * 1024, ge=1)
    """Bytes of one job's results, encoded; past it the job fails."""


class EngineBounds(BaseSettings):
    """Upper bounds of the numbers a DAG gives the engine (``JETSPARK_BOUND_*``); a DAG over
    one is refused at validation naming its pointer."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_BOUND_")

    sequence_count: int = Field(default=2**53, ge=1)
    """Far more than a job can emit; keeps ``start + count`` and rates exact in 64 bits."""
    rate_per_s: float = Field(default=10_000_000.0, gt=0)
    """Largest ``rate_per_s`` of a ``source.sequence``."""
    partition_count: int = Field(default=65_536, ge=1)
    """Largest ``config.partition_count`` of a job."""
    timeout_s: float = Field(default=7 * 24 * 3600.0, gt=0)
    """Largest ``config.timeout_s`` of a job."""
    windows_per_item: int = Field(default=1_000, ge=1)
    """A sliding window's ``size_ms / slide_ms``: the windows each item is counted in."""
    window_ms: int = Field(default=366 * 24 * 3600 * 1000, ge=1)
    """Largest window ``size_ms``, ``slide_ms`` or session ``gap_ms``."""
    json_depth: int = Field(default=64, ge=2)
    """How deep request bodies, ``params`` and JSON keys may nest."""
    problems: int = Field(default=100, ge=1)
    """Problems listed for one rejected DAG at most."""


# --- Fault tolerance (issue 12): retries, timeouts, graceful stops --------------------------


class RetrySettings(BaseSettings):
    """The backoff every loop waits out an outage with (``jetspark.retry``)."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_RETRY_")

    initial_s: float = 0.1
    """First wait; doubles per failed attempt, with full jitter."""
    max_s: float = 3.0
    """Longest wait between two attempts: well under a lease, so a worker back from an
    outage renews its leases before they run out."""
    api_retry_after_s: int = 2
    """``Retry-After`` of the API's 503 answers while PostgreSQL or Redis is down."""


class SupervisorSettings(BaseSettings):
    """``jetspark up`` as a supervisor (``JETSPARK_SUPERVISOR_*``)."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_SUPERVISOR_")

    state_file: Path | None = None
    """Where ``up`` keeps its restart counts; set by ``up`` for the API's ``/metrics``."""
    max_deaths: int = 5
    """A child dying this often within ``window_s`` stops the stack."""
    window_s: float = 60.0
    """The window ``max_deaths`` is counted over."""


class ShutdownSettings(BaseSettings):
    """What a worker does on SIGTERM (``JETSPARK_SHUTDOWN_*``)."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_SHUTDOWN_")

    grace_s: float = 30.0
    """How long a batch job in flight may run on after SIGTERM before it is handed over."""


# --- Webhooks (issue 15): signed status-change POSTs from a durable outbox -----------------


class WebhookSettings(BaseSettings):
    """Job status webhooks (``JETSPARK_WEBHOOK_*``); see SPEC §"Webhooks" and
    docs/SECURITY.md for the target rules."""

    model_config = SettingsConfigDict(env_prefix="JETSPARK_WEBHOOK_")

    secret: str | None = None
    """``JETSPARK_WEBHOOK_SECRET``: the HMAC-SHA256 key of ``X-Jetspark-Signature``. Unset,
    a submission naming ``config.notify`` is refused (422) and nothing is delivered."""
    default_urls: CsvList = Field(default_factory=list)
    """``JETSPARK_WEBHOOK_DEFAULT_URLS``: receive every job's status changes (the list at a
    job's submission is the one it keeps)."""
    allowed_hosts: CsvList = Field(default_factory=list)
    """``JETSPARK_WEBHOOK_ALLOWED_HOSTS``: host names (``hooks.example.com``,
    ``*.example.com``) and networks (``10.1.0.0/16``, ``127.0.0.1/32``). Empty: any host
    whose every address is public. Set: only the hosts named or the addresses inside the
    networks listed, and a non-public address only inside a listed network."""
    max_attempts: int = Field(default=12, ge=1)
    """POSTs of one delivery before it is given up (``failed``)."""
    max_age_s: float = Field(default=24 * 3600.0, gt=0)
    """A delivery still failing this long after its status change is given up."""
    backoff_initial_s: float = Field(default=1.0, gt=0)
    """Wait after the first failed POST; doubles per attempt up to ``backoff_max_s``."""
    backoff_max_s: float = Field(default=600.0, gt=0)
    """Longest wait between two POSTs of one delivery."""
    timeout_s: float = Field(default=10.0, gt=0)
    """One POST, connect to last byte read, at most."""
    max_response_bytes: int = Field(default=64 * 1024, ge=0)
    """Bytes of a receiver's answer read at most (the rest is dropped unread)."""
    concurrency: int = Field(default=8, ge=1)
    """POSTs one API process has in flight at once."""
    poll_s: float = Field(default=2.0, gt=0)
    """The deliverer looks for due deliveries at least this often (a NOTIFY wakes it at
    once)."""
    deliver: bool = True
    """``JETSPARK_WEBHOOK_DELIVER``: this API process runs a deliverer (several may)."""
