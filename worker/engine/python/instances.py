"""Processor instances kept alive from one epoch to the next in a Python worker process.

Spark reuses its Python worker processes (``spark.python.worker.reuse``, on by default): a
process runs one task after another, but which process runs processor g's task in the next
epoch is Spark's choice. So each process keeps the instances its tasks ran, keyed by
``(run, vertex, g)`` and tagged with the **generation** of the state they hold: the epoch
whose state they saved last. The next epoch's task takes its instance back only when it is
there and of the generation the driver expects (the epoch that produced the task's restore
entries); anything else is a miss, and the task restores a fresh instance from the entries,
which every task receives either way, as after a restart.

Why a hit never sees rolled-back state: ``run`` is new for every run of a job (a restart,
a replay after a restore, a handover: each is a new run), so an instance of a run that
failed or was cut short is never taken again; an entry is removed while its task runs and
put back only when the task ended normally (a task that failed or was retried leaves
none); and the generation names the state the driver carries on, so an instance whose epoch
is re-run (Spark recomputing a lost partition) does not match.
"""

from __future__ import annotations

import contextlib
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from jetspark.processor import Context, Processor
from jetspark.processor.runtime.outbox import RuntimeOutbox

Key = tuple[str, str, int]
"""``(run, vertex, processor index)``."""

IDLE_TTL_S = 600.0
"""An instance not taken back for this long belongs to a job that ended, was cancelled or
moved: it is closed and dropped at the process's next task."""
MAX_INSTANCES = 512
"""At most this many instances per Python worker process; the least recently kept go first."""


@dataclass
class LiveInstance:
    """A processor between two epochs: the instance, the outbox and context it was
    initialised with, and the generation of the state it holds."""

    processor: Processor
    outbox: RuntimeOutbox
    context: Context
    generation: int
    kept_at: float = field(default_factory=time.monotonic)


class InstanceCache:
    """The instances of one Python worker process (tasks in a process run one at a time)."""

    def __init__(self, idle_ttl_s: float = IDLE_TTL_S, capacity: int = MAX_INSTANCES) -> None:
        self.idle_ttl_s, self.capacity = idle_ttl_s, capacity
        self.entries: OrderedDict[Key, LiveInstance] = OrderedDict()

    def take(self, key: Key, generation: int | None) -> LiveInstance | None:
        """The instance kept under ``key`` if it holds state of ``generation``; it leaves the
        cache until ``keep`` puts it back. A stale one is closed. None: a miss."""
        self._expire()
        if generation is not None:
            self._drop_older(key, generation)
        live = self.entries.pop(key, None)
        if live is None:
            return None
        if generation is None or live.generation != generation:
            _close_quietly(live.processor)
            return None
        return live

    def keep(self, key: Key, live: LiveInstance) -> None:
        """Keep ``live`` for the next epoch (replacing, and closing, any other under ``key``)."""
        live.kept_at = time.monotonic()
        old = self.entries.pop(key, None)
        if old is not None and old.processor is not live.processor:
            _close_quietly(old.processor)
        self.entries[key] = live
        while len(self.entries) > self.capacity:
            _, evicted = self.entries.popitem(last=False)
            _close_quietly(evicted.processor)

    def _drop_older(self, key: Key, generation: int) -> None:
        """Instances of the same run and vertex older than ``generation`` can never be taken
        back (a run's epochs only move on): each processor's stale one goes now, not after
        ``idle_ttl_s``, so a worker holds at most the latest instance per processor."""
        run, vertex, index = key
        for other in [
            k
            for k, live in self.entries.items()
            if k[:2] == (run, vertex) and k[2] != index and live.generation < generation
        ]:
            _close_quietly(self.entries.pop(other).processor)

    def _expire(self) -> None:
        limit = time.monotonic() - self.idle_ttl_s
        for key in [k for k, live in self.entries.items() if live.kept_at < limit]:
            _close_quietly(self.entries.pop(key).processor)

    def __len__(self) -> int:
        return len(self.entries)


def _close_quietly(processor: Processor) -> None:
    with contextlib.suppress(Exception):  # a user's close() failing must not fail another task
        processor.close()


PROCESS_CACHE = InstanceCache()
"""This Python worker process's instances."""
