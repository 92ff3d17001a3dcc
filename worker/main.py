"""``jetspark worker`` / ``python -m worker.main``: a long-lived worker with a warm SparkSession."""

from __future__ import annotations

import signal
import sys
from types import FrameType

import structlog

from jetspark.db.engine import make_engine, make_session_factory
from jetspark.queue.keys import Keys
from jetspark.redis_client import fail_fast
from jetspark.settings import (
    DatabaseSettings,
    RedisSettings,
    ShutdownSettings,
    SparkSettings,
    WorkerSettings,
)
from jetspark.spark_conf import EXIT_CONFIG, SparkConfError
from jetspark.spark_session import start_spark
from worker.engine import run_job
from worker.loop import Worker

log = structlog.get_logger("jetspark.worker")


def run_worker() -> None:
    """Build the session once (warm), then loop until SIGTERM or SIGINT."""
    database, redis_settings = DatabaseSettings(), RedisSettings()
    if not database.url or not redis_settings.url:
        raise SystemExit("error: set JETSPARK_DATABASE_URL and JETSPARK_REDIS_URL")
    try:
        spark = start_spark(SparkSettings())
    except SparkConfError as error:
        # One line and a code `jetspark up` does not restart on: a bad setting stays bad.
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(EXIT_CONFIG) from None
    engine = make_engine(database.url, pool_size=4)
    worker = Worker(
        spark=spark,
        sessions=make_session_factory(engine),
        client=fail_fast(redis_settings.url),
        keys=Keys(redis_settings.namespace),
        engine_run=run_job,
        settings=WorkerSettings(),
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


if __name__ == "__main__":
    run_worker()
