"""``run_stream``: a job run epoch by epoch until its sources end or it is asked to stop.

One epoch: plan each source's range (or take the range a lost attempt planned), run every
vertex over it with the batch ops, then, at the barrier, carry the state on and hand the
snapshot to the commit thread, which writes the state to the snapshot store and commits
the snapshot's metadata with the epoch's results in PostgreSQL while the next epoch runs.
A job restarted anywhere restores the last committed snapshot and goes on from its
offsets; under exactly-once it first replays the planned epochs exactly.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import redis
import structlog
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jetspark.dag.model import ProcessingGuarantee, Routing
from jetspark.dag.plan import ExecutionPlan
from jetspark.dag.snapshots import state_shape
from jetspark.queue import events
from jetspark.queue.keys import Keys
from jetspark.retry import Retry
from worker.engine.contract import (
    EpochCommit,
    JobControl,
    JobHandedOver,
    JobOutcome,
    SnapshotRecord,
    StreamMarks,
    VertexCounts,
)
from worker.engine.errors import EngineError
from worker.engine.execution import Execution, JobCancelled, run_vertices
from worker.engine.ops.table import ops_for
from worker.engine.routing import SLOT, slot_table
from worker.engine.state_columns import PARTITION, PROCESSOR
from worker.engine.streaming.backups import BackupWatch, fewest
from worker.engine.streaming.epoch_size import EpochSizer
from worker.engine.streaming.metrics import marks_of
from worker.engine.streaming.profile import SNAPSHOT_DESCRIPTION, EpochProfile, EpochProfiles
from worker.engine.streaming.scope import SINK_MARKS, EpochScope
from worker.engine.streaming.source_planners import OncePlanner
from worker.engine.streaming.state_store import (
    SnapshotLost,
    StoreAddress,
    delete_snapshot,
    missing_state,
    read_state,
    write_state,
)
from worker.engine.streaming.watermarks import WatermarkTracker

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger("jetspark.stream")


class _Stream:
    def __init__(
        self,
        spark: SparkSession,
        control: JobControl,
        plan: ExecutionPlan,
    ) -> None:
        self.spark, self.control, self.plan = spark, control, plan
        self.job_id = control.job_id
        self.vertex_names = frozenset(v.name for v in plan.vertices)
        self.config = plan.config
        self.settings = control.stream
        guarantee = self.config.processing_guarantee
        self.snapshots = guarantee is not ProcessingGuarantee.none
        self.exactly_once = guarantee is ProcessingGuarantee.exactly_once
        self.interval_ms = self.config.epoch_interval_ms or self.settings.epoch_interval_ms
        """Epochs run this often whatever the guarantee: results flow at this pace."""
        target_ms = self.settings.epoch_target_ms
        if target_ms:  # an epoch shorter than the interval would only wait out the rest
            target_ms = max(target_ms, self.interval_ms)
        self.sizer = EpochSizer(self.settings.max_items_per_epoch, target_ms / 1000)
        """What a source may read in the next planned epoch (``epoch_size``)."""
        self.snapshot_s = self.config.snapshot_interval_ms / 1000
        self.snapshot_due = 0.0
        """When the next snapshot is due (``time.monotonic``); the first epoch takes one."""
        self.snapshot_epoch = 0
        """The epoch the last snapshot was taken at (or restored from)."""
        self.redis_url = control.redis.url
        self.job_redis_cluster = control.redis.cluster
        self.keys = Keys(control.redis.namespace)
        self.client = control.redis.client()
        self.sources = plan.sources
        self.ops = ops_for(plan)
        """The job's ops, kept from epoch to epoch; a source's op gives its planner."""
        self.planners = {
            s: self.ops[s].planner_for(control) if s in self.ops else OncePlanner()
            for s in self.sources
        }
        self.endless = frozenset(s for s in self.sources if plan.vertex(s).endless)
        self.job_t0_ms = _now_ms()
        """See ``EpochScope.job_t0_ms``: the first epoch's, restored with a snapshot."""
        self.sinks = plan.sinks
        self.fingerprint = plan.fingerprint
        self.counts: dict[str, VertexCounts] = {}
        self.results: dict[str, list[dict[str, Any]]] = {}
        """Records kept in memory when no epoch log commits them (engine-level runs)."""
        self.state: dict[str, DataFrame] = {}
        self.late: dict[str, int] = {}
        self.marks = StreamMarks(0, {})
        self.committer = ThreadPoolExecutor(
            1,
            thread_name_prefix=f"commit-{self.job_id}",
            initializer=_inherit_spark_properties(spark),
        )
        """Writes each epoch's snapshot and commits it while the next epoch runs."""
        self.pending: Future[None] | None = None
        self.profiles = EpochProfiles(control.timings, spark.sparkContext, control.job_group)
        """Where each epoch's time goes (``profile``), kept in the job's timings."""
        self.restarted_at = 0
        """The epoch this attempt started after (its first ones are profiled in full)."""
        self.backups = BackupWatch(self.job_id, self.config.backup_count)
        """Whether the snapshots have every backup, from one to the next."""
        self.durable = Retry(f"stream {self.job_id}", logger=log, stopping=control.cancelled)
        """Waits out PostgreSQL or Redis going away under the epoch log and the snapshots."""
        control.counts = lambda: self.counts
        control.marks = lambda: self.marks

    # --- start ---------------------------------------------------------------------------

    def start(self) -> tuple[int, dict[str, Any], WatermarkTracker]:
        epochs = self.control.epochs
        restored = (
            self.durable(epochs.restore_point) if epochs is not None and self.snapshots else None
        )
        name = self.config.initial_snapshot
        if restored is None and name is not None:
            restored = self.durable(epochs.named_snapshot, name) if epochs is not None else None
            if restored is None:
                raise EngineError(f"no committed snapshot is named {name!r}")
        if restored is None:
            return self.from_the_beginning()
        log.info("restoring", job=str(self.job_id), snapshot=restored.snapshot_id)
        try:
            self.state = self.restore_state(restored)
        except SnapshotLost as lost:
            if epochs is None or not self.replayable(restored):
                raise
            log.warning("snapshot lost: replaying from the sources' beginning", reason=str(lost))
            self.durable(epochs.reset)
            return self.from_the_beginning()
        self.snapshot_epoch = restored.epoch
        tracker = WatermarkTracker.from_json(restored.offsets.get("watermarks", {}), self.plan)
        if restored.job_id == self.job_id:  # another job's (initial) snapshot: counts and t0
            saved = restored.offsets.get("counts", {})  # of its own
            self.backups.resume(restored.stats)
            self.counts = {n: VertexCounts(**c) for n, c in saved.items()}
            self.job_t0_ms = int(restored.offsets.get("job_t0_ms", self.job_t0_ms))
        return restored.epoch, dict(restored.offsets["sources"]), tracker

    def from_the_beginning(self) -> tuple[int, dict[str, Any], WatermarkTracker]:
        now = self.job_t0_ms = _now_ms()
        offsets = {s: self.planners[s].start(self.plan.vertex(s).params, now) for s in self.sources}
        return 0, offsets, WatermarkTracker.for_plan(self.plan)

    def replayable(self, lost: SnapshotRecord) -> bool:
        """An exactly-once job of its own snapshot whose sources can start over and whose
        sinks end as one run would leave them: it replays instead of failing."""
        ends = self.sources + self.sinks
        return (
            self.exactly_once
            and lost.job_id == self.job_id
            and all(n in self.ops and self.ops[n].replayable for n in ends)
        )

    def restore_state(self, record: SnapshotRecord) -> dict[str, DataFrame]:
        address = StoreAddress(
            self.redis_url,
            self.keys,
            record.job_id,
            record.snapshot_id,
            int(record.stats["partition_count"]),
            cluster=self.job_redis_cluster,
        )
        self.check_intact(record, address)
        state: dict[str, DataFrame] = {}
        for vertex, stats in record.stats.get("vertices", {}).items():
            if vertex not in self.vertex_names:
                continue
            frame = read_state(self.spark, vertex, address, stats["schema"])
            # Read now: the snapshot's keys go once the next one commits.
            state[vertex] = self.reslot(vertex, frame, stats["layout"]).localCheckpoint(eager=True)
        return state

    def check_intact(self, record: SnapshotRecord, address: StoreAddress) -> None:
        """Every blob the snapshot's commit counted is in Redis, byte for byte; else the
        job fails naming the snapshot (going on with what is left would be silently wrong)."""
        lost = [
            gap
            for vertex, stats in record.stats.get("vertices", {}).items()
            if vertex in self.vertex_names and "keys" in stats
            if (
                gap := self.durable(
                    missing_state,
                    self.client,
                    address,
                    vertex,
                    keys=int(stats["keys"]),
                    size=int(stats["bytes"]),
                )
            )
        ]
        if lost:
            which = f"snapshot {record.snapshot_id} of job {record.job_id}"
            if record.name:
                which += f" ({record.name!r})"
            raise SnapshotLost(f"{which}: its state is lost from Redis: {'; '.join(lost)}")

    def reslot(self, vertex: str, frame: DataFrame, layout: dict[str, int]) -> DataFrame:
        """State saved under another parallelism or membership goes to its new owners: a
        keyed row to the processor its key's partition routes to now (the edge's formula),
        any other row to its old processor's index modulo the new parallelism."""
        plan = self.plan.vertex(vertex)
        old_lp = layout["local_parallelism"]
        if (layout["parallelism"], old_lp) == (plan.parallelism, plan.local_parallelism):
            return frame
        n, lp = plan.parallelism, plan.local_parallelism
        old = F.col(PROCESSOR)
        inbound = self.plan.inbound(vertex)
        keyed = bool(inbound) and inbound[0].routing in (Routing.partitioned, Routing.all_to_one)
        if not keyed:
            target = F.pmod(old, F.lit(n))
        elif inbound[0].distributed:
            target = F.pmod(F.col(PARTITION), F.lit(n))
        else:
            member = F.pmod(F.floor(old / F.lit(old_lp)), F.lit(max(n // lp, 1)))
            target = member * F.lit(lp) + F.pmod(F.col(PARTITION), F.lit(lp))
        slots = F.array(*[F.lit(s) for s in slot_table(n)])
        moved = frame.withColumn(PROCESSOR, target.cast("int"))
        return moved.withColumn(SLOT, F.element_at(slots, F.col(PROCESSOR) + 1))

    # --- epochs --------------------------------------------------------------------------

    def run(self) -> JobOutcome:
        epoch, offsets, tracker = self.start()
        self.restarted_at = epoch
        next_start = time.monotonic()
        while True:
            if self.control.cancelled.is_set():
                raise JobCancelled(f"job {self.job_id} was asked to stop")
            handover = self.control.handover.is_set()
            if handover and (not self.snapshots or self.snapshot_epoch == epoch):
                self.await_commit()  # the last snapshot: the next worker starts from it
                raise JobHandedOver(f"job {self.job_id} handed over after epoch {epoch}")
            epoch += 1
            profile = EpochProfile(
                epoch=epoch, sampled=self.profiles.sampled(epoch, self.restarted_at)
            )
            planning = time.monotonic()
            ranges = None
            if self.exactly_once and self.control.epochs is not None:
                ranges = self.durable(self.control.epochs.planned_ranges, epoch)
                if ranges is not None:
                    self.job_t0_ms = int(ranges.get("__job_t0_ms", self.job_t0_ms))
            replayed = ranges is not None
            if ranges is None:
                # Handing over, one more epoch ends at a snapshot, without waiting.
                if not handover and self._interrupted(max(0.0, next_start - time.monotonic())):
                    epoch -= 1
                    continue
                planning = time.monotonic()  # the wait for the epoch's start is no work
                self.note_behind(next_start, planning)
                ranges = self.plan_epoch(epoch, offsets)
            next_start = time.monotonic() + self.interval_ms / 1000
            done_before = self.read_to_end(offsets)
            offsets = {
                s: self.planners[s].advance(self.plan.vertex(s).params, offsets[s], ranges[s])
                for s in self.sources
            }
            done_after = self.read_to_end(offsets)
            final = len(done_after) == len(self.sources)
            scope = EpochScope(
                epoch=epoch,
                final=final,
                now_ms=int(ranges.get("__now_ms", _now_ms())),
                plan=self.plan,
                ranges=ranges,
                watermarks=tracker,
                state_in=self.state,
                job_t0_ms=self.job_t0_ms,
                done_before=done_before,
                done_after=done_after,
                endless=self.endless,
                replayed=replayed,
            )
            execution = Execution(self.spark, self.plan, self.control, scope, self.ops)
            execution.sink_results = scope.results
            began = time.monotonic()
            profile.plan_s = began - planning
            jobs_before = self.profiles.job_ids() if profile.sampled else set()
            try:
                quiet = not final and all(
                    self.planners[s].is_empty(ranges[s]) for s in self.sources
                )
                if quiet and not self.wakes(scope):
                    self.quiet_epoch(scope)
                else:
                    run_vertices(execution)
                profile.run_s = time.monotonic() - began
                counts = execution.counters.counts()
                self.barrier(scope, offsets, counts, profile, jobs_before)
                if not replayed:  # a replay read what the lost attempt planned
                    read = [counts[s].items_out for s in self.sources if s in counts]
                    self.sizer.observe(read, time.monotonic() - planning)
            finally:
                execution.release()
            log.debug(
                "epoch ran",
                job=str(self.job_id),
                epoch=epoch,
                final=final,
                seconds=round(time.monotonic() - began, 3),
            )
            if final:
                self.await_commit()
                return JobOutcome(
                    results=self.results,
                    vertex_counts=self.counts,
                    sources=self.sources,
                    sinks=self.sinks,
                )

    def note_behind(self, due: float, started: float) -> None:
        """An epoch that starts later than due (the one before ran over its interval) leaves
        its sources' input waiting: the span goes to ``JobControl.behind`` (wall-clock ms),
        where backpressure is measured."""
        if started > due:
            now_ms, now = time.time() * 1000, time.monotonic()
            span = (int(now_ms - (now - due) * 1000), int(now_ms - (now - started) * 1000))
            self.control.behind.append(span)

    def read_to_end(self, offsets: dict[str, Any]) -> frozenset[str]:
        """The sources these offsets put at their end."""
        return frozenset(
            s
            for s in self.sources
            if self.planners[s].exhausted(self.plan.vertex(s).params, offsets[s])
        )

    def _interrupted(self, wait_s: float) -> bool:
        """Wait for the next epoch's start; True when asked to stop or hand over first."""
        deadline = time.monotonic() + wait_s
        while (left := deadline - time.monotonic()) > 0:
            if self.control.cancelled.wait(min(left, 0.1)) or self.control.handover.is_set():
                return True
        return self.control.cancelled.is_set() or self.control.handover.is_set()

    def plan_ranges(self, offsets: dict[str, Any]) -> dict[str, Any]:
        now = _now_ms()
        ranges: dict[str, Any] = {
            s: self.planners[s].plan(self.plan.vertex(s).params, offsets[s], now, self.sizer.cap)
            for s in self.sources
        }
        ranges["__now_ms"] = now
        ranges["__job_t0_ms"] = self.job_t0_ms
        return ranges

    def plan_epoch(self, epoch: int, offsets: dict[str, Any]) -> dict[str, Any]:
        """The epoch's ranges, planned now; under exactly-once with the sinks' marks, and
        stored before the epoch runs (a replay reads exactly these)."""
        ranges = self.plan_ranges(offsets)
        if self.exactly_once and self.control.epochs is not None:
            if marks := self.sink_marks():
                ranges[SINK_MARKS] = marks
            self.durable(self.control.epochs.plan_epoch, epoch, ranges, self.fingerprint)
        return ranges

    def sink_marks(self) -> dict[str, Any]:
        """Per sink that notes something in an exactly-once epoch's plan, what it notes."""
        marks = {
            name: op.epoch_mark(self.control, self.plan.vertex(name).params)
            for name, op in self.ops.items()
            if name in self.sinks
        }
        return {name: mark for name, mark in marks.items() if mark is not None}

    def wakes(self, scope: EpochScope) -> bool:
        """Has an epoch without input work for Spark? Only when an op ``wakes`` at its new
        watermarks (a lull closing a window): the watermarks are moved on a copy first, so
        an epoch with nothing to compute runs no Spark job."""
        trial = replace(
            scope,
            watermarks=copy.deepcopy(scope.watermarks),
            wm_before={},
            wm_after={},
            state_out={},
            deferred=[],
        )
        self.quiet_epoch(trial)
        return any(
            op.wakes(self.state.get(name), trial.wm_before.get(name, {}), trial.wm_after[name])
            for name, op in self.ops.items()
            if name in trial.wm_after
        )

    def quiet_epoch(self, scope: EpochScope) -> None:
        """No source has anything new: watermarks still move (idle inputs), Spark rests."""
        for name in self.plan.order:
            if self.plan.inbound(name):
                scope.coalesce(name)
            op = self.ops.get(name)
            if op is not None:
                op.quiet(scope, name, self.plan.vertex(name).params)
            else:
                scope.watermarks.pass_through(name)
        scope.state_out = dict(self.state)  # no op ran: every state goes on as it was

    def barrier(
        self,
        scope: EpochScope,
        offsets: dict[str, Any],
        counts: dict[str, VertexCounts],
        profile: EpochProfile,
        jobs_before: set[int],
    ) -> None:
        """End the epoch: carry the state on, then take the snapshot and commit.

        What the snapshot holds is fixed here: the state frames (checkpointed, so the next
        epoch reading them changes nothing), offsets, watermarks and counts. Writing the
        state to Redis and committing run on the commit thread while the next epoch runs, as
        Jet's snapshots do; epochs still commit in order, one at a time. A replay after a
        crash finds both planned epochs in the log.
        """
        scope.resolve()  # an insert_watermarks no vertex coalesced after (a dead end)
        for name, c in counts.items():
            total = self.counts.setdefault(name, VertexCounts())
            total.items_in += c.items_in
            total.items_out += c.items_out
        profile.items = sum(counts[s].items_out for s in self.sources if s in counts)
        cutting = time.monotonic()
        ready = scope.state_ready | {  # a state carried unchanged (a quiet epoch) too
            name for name, frame in scope.state_out.items() if frame is self.state.get(name)
        }
        carried = {
            name: frame if name in ready else frame.localCheckpoint(eager=True)
            for name, frame in scope.state_out.items()
        }
        profile.checkpoint_s = time.monotonic() - cutting
        if profile.sampled:
            profile.job_ids = self.profiles.job_ids() - jobs_before
        for name, late in scope.late_items.items():  # counted as the state was computed
            self.late[name] = self.late.get(name, 0) + late.total()
        # The processors have taken in this epoch's watermarks: show them now, as Jet's
        # metrics do, not once the snapshot is written too.
        self.marks = StreamMarks(scope.epoch, marks_of(scope.watermarks, self.late))
        self.state = carried
        counted = {n: VertexCounts(c.items_in, c.items_out) for n, c in self.counts.items()}
        snapshot = None
        if self.snapshot_taken(scope):
            snapshot = self.snapshot_offsets(scope, offsets, counted)
        waiting = time.monotonic()
        self.await_commit()
        profile.await_commit_s = time.monotonic() - waiting
        self.pending = self.committer.submit(
            self.commit_durably, scope.epoch, scope.results, carried, snapshot, counted, profile
        )

    def snapshot_taken(self, scope: EpochScope) -> bool:
        """Does this epoch end at a snapshot? Under a guarantee, every
        ``snapshot_interval_ms``, at the stream's end and before a handover. Epochs between
        snapshots commit their results all the same; a restore replays them (exactly-once)
        or runs them again (at-least-once)."""
        if not self.snapshots:
            return False
        now = time.monotonic()
        if not (scope.final or self.control.handover.is_set() or now >= self.snapshot_due):
            return False
        self.snapshot_due, self.snapshot_epoch = now + self.snapshot_s, scope.epoch
        return True

    def await_commit(self) -> None:
        """Wait for the previous epoch's commit; its failure fails the job here."""
        pending, self.pending = self.pending, None
        if pending is not None:
            pending.result()

    def commit_durably(
        self,
        epoch: int,
        results: dict[str, list[dict[str, Any]]],
        state: dict[str, DataFrame],
        snapshot: dict[str, Any] | None,
        counts: dict[str, VertexCounts],
        profile: EpochProfile | None = None,
    ) -> None:
        """``commit``, outages waited out; a snapshot that fails for good is in the job's
        snapshot history with its reason."""
        history = self.control.snapshot_history
        if snapshot is not None and history is not None:
            history.snapshot_started(epoch, epoch)
        try:
            self.durable(self.commit, epoch, results, state, snapshot, counts, profile)
        except BaseException as error:
            if snapshot is not None and history is not None:
                if self.control.cancelled.is_set() or self.control.handover.is_set():
                    error = JobCancelled(f"the job was asked to stop: {error}")
                history.snapshot_ended(epoch, error)
            raise

    def commit(
        self,
        epoch: int,
        results: dict[str, list[dict[str, Any]]],
        state: dict[str, DataFrame],
        snapshot: dict[str, Any] | None,
        counts: dict[str, VertexCounts],
        profile: EpochProfile | None = None,
    ) -> None:
        """On the commit thread: write the snapshot's state, then commit the epoch."""
        profile = profile if profile is not None else EpochProfile(epoch=epoch)
        writing = time.monotonic()
        record = None if snapshot is None else self.write_snapshot(epoch, state, snapshot)
        if record is not None:
            written = record.stats["vertices"].values()
            profile.snapshot_s = time.monotonic() - writing
            profile.state_rows = sum(int(v["rows"]) for v in written)
            profile.state_bytes = sum(int(v["bytes"]) for v in written)
        committing = time.monotonic()
        epochs = self.control.epochs
        if epochs is None:
            for vertex, items in results.items():
                self.results.setdefault(vertex, []).extend(items)
        else:
            commit = EpochCommit(
                epoch=epoch,
                snapshot=record,
                results=results,
                counts=counts,
                sources=self.sources,
                sinks=self.sinks,
            )
            for old in epochs.commit(commit):
                if old.job_id == self.job_id:
                    delete_snapshot(self.client, self.address(old.snapshot_id))
        profile.commit_s = time.monotonic() - committing
        self.profiles.record(profile)
        if record is not None:
            self.announce(record)

    def snapshot_offsets(
        self, scope: EpochScope, offsets: dict[str, Any], counts: dict[str, VertexCounts]
    ) -> dict[str, Any]:
        """Where the snapshot taken at this epoch's end resumes from."""
        return {
            "sources": offsets,
            "source_kinds": {s: self.plan.vertex(s).processor for s in self.sources},
            "watermarks": scope.watermarks.to_json(),
            "counts": {n: vars(c).copy() for n, c in counts.items()},
            "job_t0_ms": scope.job_t0_ms,
        }

    def write_snapshot(
        self, epoch: int, state: dict[str, DataFrame], offsets: dict[str, Any]
    ) -> SnapshotRecord:
        address = self.address(epoch)
        vertices: dict[str, Any] = {}
        acked: list[dict[str, int]] = []
        for name, frame in state.items():
            written = write_state(
                frame,
                name,
                address,
                backup_count=self.config.backup_count,
                require_backups=self.config.require_backups,
            )
            acked.append(written.backups)
            plan = self.plan.vertex(name)
            vertices[name] = {
                **state_shape(self.plan, name),
                "schema": written.schema,
                "keys": written.keys,
                "rows": written.rows,
                "bytes": written.bytes,
                "layout": {
                    "parallelism": plan.parallelism,
                    "local_parallelism": plan.local_parallelism,
                },
            }
        return SnapshotRecord(
            job_id=self.job_id,
            snapshot_id=epoch,
            epoch=epoch,
            name=None,
            offsets=offsets,
            stats={
                "partition_count": self.plan.partition_count,
                "fingerprint": self.fingerprint,
                "vertices": vertices,
                "replication": self.backups.observe(fewest(acked)),
            },
        )

    def address(self, snapshot_id: int) -> StoreAddress:
        return StoreAddress(
            self.redis_url,
            self.keys,
            self.job_id,
            snapshot_id,
            self.plan.partition_count,
            cluster=self.job_redis_cluster,
        )

    def announce(self, record: SnapshotRecord) -> None:
        """Tell the job's event stream a snapshot was committed."""
        try:
            events.publish(
                self.client,
                self.keys,
                self.job_id,
                events.EventKind.snapshot,
                {"snapshot_id": record.snapshot_id, "epoch": record.epoch},
            )
        except redis.RedisError as error:  # reporting never stops a job
            log.warning("snapshot not announced", job=str(self.job_id), error=str(error))


def epoch_session(spark: SparkSession) -> SparkSession:
    """A session of the stream's own on the worker's SparkContext (same JVM, executors and
    cache), with adaptive query execution off: an epoch runs a few small queries, and AQE
    re-plans each at every stage. That cost a third of an epoch (``bench.streaming``, 100k
    events per 1 s epoch: 1.0 s -> 0.7 s), and the routing exchanges fix the partitioning
    AQE would otherwise tune.

    Its shuffles (an aggregate's partial groups on their way to the final one) have one
    partition per core rather than the worker's ``shuffle_partitions``: an epoch's groups are
    few, and a task per partition more than the cores ran in waves (``bench.streaming``, 1M
    items an epoch, 8 -> 2 partitions on two cores: the epoch's job 0.21 -> 0.19 s)."""
    session = spark.newSession()
    session.conf.set("spark.sql.adaptive.enabled", "false")
    cores = spark.sparkContext.defaultParallelism
    session.conf.set("spark.sql.shuffle.partitions", str(cores))
    copartition = "spark.sql.requireAllClusterKeysForCoPartition"  # set by ``run_job``
    session.conf.set(copartition, spark.conf.get(copartition) or "true")
    return session


def run_stream(spark: SparkSession, plan: ExecutionPlan, control: JobControl) -> JobOutcome:
    """Run the plan in epochs; returns when every source is exhausted (never, if unbounded)."""
    stream = _Stream(spark, control, plan)
    try:
        return stream.run()
    finally:
        stream.committer.shutdown(wait=True)  # a commit in flight ends before the state goes
        for frame in stream.state.values():
            frame.unpersist()
        stream.client.close()


_INHERITED = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel",
              "spark.scheduler.pool")  # fmt: skip


def _inherit_spark_properties(spark: SparkSession) -> Callable[[], None]:
    """For a helper thread: this thread's job group and pool, so that cancelling the job
    cancels the helper's Spark jobs too (a Python thread starts without them)."""
    context = spark.sparkContext
    properties = {key: context.getLocalProperty(key) for key in _INHERITED}

    def inherit() -> None:
        for key, value in properties.items():
            if value is not None:
                context.setLocalProperty(key, value)
        # Its Spark jobs (the state read out for the snapshot) are told from the epoch's.
        context.setLocalProperty("spark.job.description", SNAPSHOT_DESCRIPTION)

    return inherit


def _now_ms() -> int:
    return int(time.time() * 1000)
