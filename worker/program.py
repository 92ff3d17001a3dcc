"""The worker program (``worker.main`` runs it): a long-lived worker with a warm SparkSession.

Only what its liveness needs is imported before the worker has yielded to a takeover on this
host (``yield_to_takeovers``); PySpark and the engine are imported after, when their CPU is
no longer taken from another worker resuming a dead one's stream on the same cores.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING

import structlog

from jetspark.cli.errors import CliError
from jetspark.cli.preflight import require_settings
from jetspark.db.engine import make_engine, make_session_factory
from jetspark.queue.keys import Keys
from jetspark.redis_client import fail_fast
from jetspark.settings import DatabaseSettings, RedisSettings, ShutdownSettings, WorkerSettings
from worker.liveness import Liveness, new_worker_id, yield_to_takeovers

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger("jetspark.worker")


def run_worker() -> None:
    """Build the session once (warm), then loop until SIGTERM or SIGINT."""
    database, redis_settings = DatabaseSettings(), RedisSettings()
    try:
        database_url, redis_url = require_settings(database.url, redis_settings.url)
    except CliError as error:
        print(f"error: {error.message}", file=sys.stderr)
        raise SystemExit(error.exit_code) from None
    engine = make_engine(database_url, pool_size=4)
    sessions = make_session_factory(engine)
    client, keys = fail_fast(redis_url), Keys(redis_settings.namespace)
    settings, worker_id = WorkerSettings(), new_worker_id()
    # Alive (and judging the others) while Spark starts: a replacement for a worker that
    # died finds it lost and requeues its jobs at once, not once its own JVM is up.
    liveness = Liveness(
        engine=engine,
        sessions=sessions,
        client=client,
        keys=keys,
        worker_id=worker_id,
        settings=settings,
    )
    liveness.start()
    yield_to_takeovers(sessions, worker_id, deadline_s=settings.yield_to_takeovers_s)
    try:
        spark = _spark_started()
    except BaseException:
        liveness.stop()
        raise
    # Spark's side of the worker is imported once it may use the CPU (see the module).
    from worker.engine import run_job
    from worker.engine.contract import RedisTarget
    from worker.loop import Worker
    from worker.warm_up import warm_up

    if settings.warm_up:
        warm_up(spark, RedisTarget.of_client(client, keys.namespace))
    worker = Worker(
        spark=spark,
        sessions=sessions,
        client=client,
        keys=keys,
        engine_run=run_job,
        settings=settings,
        worker_id=worker_id,
        liveness=liveness,
    )

    def stop(signum: int, frame: FrameType | None) -> None:
        del frame
        log.info("stopping", signal=signum)
        worker.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        worker.run()
        worker.drain(ShutdownSettings().grace_s)
    finally:
        # Jobs still running are left to another worker (which takes this one for lost once
        # its liveness session ends): mark them stopped first, so the errors spark.stop()
        # raises in their threads are not recorded as the jobs' failures.
        for held in list(worker.held.values()):
            held.abandoned.set()
            held.control.cancelled.set()
        worker.close()  # jobs still held are requeued by the others once the session ends
        spark.stop()
        engine.dispose()


def _spark_started() -> SparkSession:
    """This worker's SparkSession, started (and its executor code shipped); a bad setting
    exits with one line and a code `jetspark up` does not restart on."""
    from jetspark.settings import SparkSettings
    from jetspark.spark_conf import EXIT_CONFIG, SparkConfError
    from jetspark.spark_session import start_spark
    from worker.executor_code import ship_if_needed

    try:
        spark_settings = SparkSettings()
        spark = start_spark(spark_settings)
        ship_if_needed(spark, spark_settings)
    except SparkConfError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(EXIT_CONFIG) from None
    return spark
