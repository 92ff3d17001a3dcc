"""A process that only lives: it holds a worker's liveness (``worker.liveness.Liveness``)
until it is killed, so a test can SIGKILL or SIGSTOP a real process and watch the others.

``python -m tests.faults.liveness_process <database url> <redis url> <namespace> <worker id>``
"""

from __future__ import annotations

import signal
import sys

from jetspark.db.engine import make_engine, make_session_factory
from jetspark.queue.keys import Keys
from jetspark.redis_client import fail_fast
from jetspark.settings import WorkerSettings
from worker.liveness import Liveness


def main(database_url: str, redis_url: str, namespace: str, worker_id: str) -> None:
    engine = make_engine(database_url, pool_size=1)
    liveness = Liveness(
        engine=engine,
        sessions=make_session_factory(engine),
        client=fail_fast(redis_url),
        keys=Keys(namespace),
        worker_id=worker_id,
        settings=WorkerSettings(),
    )
    liveness.start()
    while True:
        signal.pause()  # alive until a signal ends the process


if __name__ == "__main__":
    main(*sys.argv[1:5])
