"""What every op is: the ``Op`` base class with its declared capabilities, and the
``OpContext`` a job hands it (its vertex, params, routed inputs and the job's settings)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from jetspark.dag.model import EdgeConfig
from jetspark.dag.plan import EdgePlan, VertexPlan
from jetspark.jdbc.connections import JdbcConnections
from jetspark.kafka.clusters import KafkaClusters
from jetspark.settings import DataSettings
from worker.engine.contract import JobControl, RedisTarget
from worker.engine.errors import EngineError
from worker.engine.streaming.scope import EpochScope
from worker.engine.streaming.source_planners import Json, OncePlanner, SourcePlanner

DEFAULT_OUTBOX = EdgeConfig().outbox_capacity


def _unpersisted(frame: DataFrame) -> DataFrame:
    return frame


@dataclass
class OpContext:
    """What an op sees: its vertex, params and already-routed inbound frames.

    ``inputs[i]`` arrived over ``inbound[i]`` (index = ``to_ordinal``). A routed frame carries
    the ``SLOT`` column it is partitioned on; a frame over a fused edge may not. An op that
    ``places_own_input`` gets the sender's frame as it is over a non-fused edge.
    """

    spark: SparkSession
    vertex: VertexPlan
    params: BaseModel
    inputs: list[DataFrame]
    inbound: list[EdgePlan]
    senders: list[VertexPlan]
    """The vertex at the other end of each inbound edge."""
    partition_count: int
    results_cap: int
    sink_results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    keep: Callable[[DataFrame], DataFrame] = _unpersisted
    """Persist a frame for the rest of the job (read twice, computed once)."""
    outbound: list[EdgePlan] = field(default_factory=list)
    """Outbound edges, index = from_ordinal."""
    receivers: list[VertexPlan] = field(default_factory=list)
    """The vertex at the other end of each outbound edge."""
    epoch: EpochScope | None = None
    """Set when the job runs in epochs (a streaming job): ranges, state, watermarks."""
    redis: RedisTarget | None = None
    """The job's Redis (``JobControl.redis``), for the sinks and sources that use one."""
    count_input: Callable[[DataFrame], DataFrame] | None = None
    """Set when an op that ``counts_own_input`` is to count its items itself: it aggregates
    ``counting.items_column()`` with its groups and passes the groups through this."""
    owner: str = "jetspark"
    """Names the job in the directories its ``sink.files`` creates (``data_paths.MARKER``)."""
    allowed_modules: tuple[str, ...] = ()
    """Modules a ``python`` vertex may load its class from (``JobControl``; none by default)."""
    metrics_url: str | None = None
    metrics_cluster: bool = False
    """``metrics_url`` names a node of a Redis Cluster."""
    """Where Python processors publish live metrics (``JobControl``; none: not published)."""
    data: DataSettings | None = None
    """The data roots ``source.files`` / ``sink.files`` are held to (``JobControl.data``)."""
    jdbc: JdbcConnections = field(default_factory=JdbcConnections)
    """The databases ``source.jdbc`` / ``sink.jdbc`` may use (``JobControl.jdbc``)."""
    kafka: KafkaClusters = field(default_factory=KafkaClusters)
    """The Kafka clusters ``source.kafka`` / ``sink.kafka`` may use (``JobControl.kafka``)."""
    exactly_once: bool = False
    """The job's ``processing_guarantee`` is ``exactly_once``."""
    known_input: int | None = None
    """How many items a batch run's inbound edges carry in all, when known on the driver
    (``Op.known_count``); None otherwise."""
    max_records: int | None = None
    """The job's ``max_processor_accumulated_records``: what an op that gathers records
    (groups, a join's build side, a sort's items) may hold per processor (``accumulation``)."""

    @property
    def only_input(self) -> DataFrame:
        return self.inputs[0]

    @property
    def job_redis(self) -> RedisTarget:
        """The job's Redis; an op that needs one fails clearly without it."""
        if self.redis is None:
            raise EngineError(f"vertex {self.vertex.name}: the job has no Redis")
        return self.redis


class Op:
    """One processor kind's translation to Spark: ``apply(context) -> DataFrame``.

    An instance serves one vertex of one job (``ops.table.ops_for``), so it may keep what
    that vertex's runs leave (a Python vertex's metrics). What the walkers do for an op
    around ``apply`` is decided by the capabilities it declares here, never guessed.
    """

    places_own_input: ClassVar[bool] = False
    """Gets its senders' frames unrouted over non-fused edges and routes them itself."""
    counts_own_input: ClassVar[bool] = False
    """Counts its received items in its own groups (``OpContext.count_input``)."""
    coalesces_itself: ClassVar[bool] = False
    """Coalesces its input watermarks itself, once its output is computed."""
    forwards_own_watermarks: ClassVar[bool] = False
    """Forwards watermarks itself; for every other op the walker passes on what it
    coalesced."""
    recomputable: ClassVar[bool] = True
    """Its output may be computed again for each outbound edge of a fork that is not
    ``buffered`` (False: the fork is always kept, e.g. a Python vertex with side effects)."""
    replayable: ClassVar[bool] = False
    """A source that gives the same items again from its beginning, or a sink that a replay
    from the beginning leaves as one run would: an exactly-once job made only of such
    replays when its snapshot is lost, instead of failing."""

    def apply(self, ctx: OpContext) -> DataFrame:
        raise NotImplementedError

    def preserves_count(self, ctx: OpContext) -> bool:
        """Whether this run of it emits exactly one item per item it receives: its count is
        then its input's, known on the driver, or not observed when no exchange precedes it
        (``counting``)."""
        return False

    def known_count(self, ctx: OpContext) -> int | None:
        """How many items a batch run of it emits, when the driver knows before Spark runs
        it (none to observe then); None otherwise."""
        return None

    def rows_counted_by(
        self, params: BaseModel, output: DataFrame | None
    ) -> tuple[str, str] | None:
        """The plan node that makes this op's items, and the output column it makes, when
        Spark counts that node's rows anyway (``node_rows``): a batch run reads that count
        instead of observing the items (``counting``). ``output``: the op's output, None
        before it is built (an op that needs it to tell answers None then)."""
        return None

    def emitted_per_item(self, params: BaseModel, received: DataFrame) -> Column | None:
        """How many items it emits for each item of ``received`` (its one inbound frame), as
        a column over that frame, when that is known without running it; None otherwise.

        Its count is then observed on its input rather than on its output: an op that
        emits many items per item (``flat_map``) is counted over fewer rows, and the
        observation, which breaks Spark's code generation, stays off its output's path.
        """
        return None

    def quiet(self, epoch: EpochScope, vertex: str, params: BaseModel) -> None:
        """An epoch in which no source read anything: Spark rests, watermarks still move
        (idle inputs). An op that forwards watermarks itself forwards nothing then."""
        if not self.forwards_own_watermarks:
            epoch.watermarks.pass_through(vertex)

    def wakes(
        self,
        state: DataFrame | None,
        before: Mapping[int, int | None],
        after: Mapping[int, int | None],
    ) -> bool:
        """In an epoch without input, its coalesced watermarks went from ``before`` to
        ``after`` (a lull): has it work for Spark now (a window to close)? Else the epoch
        runs no Spark job."""
        return False

    def epoch_mark(self, control: JobControl, params: BaseModel) -> Json | None:
        """As a sink in an exactly-once stream: what it notes in an epoch's plan before the
        epoch runs (``EpochScope.sink_mark``), so a replay of the epoch can find what a lost
        attempt wrote (``sink.kafka``: its topic's end offsets). None: nothing."""
        return None

    def planner(self, redis: RedisTarget) -> SourcePlanner:
        """As a source in an epoch run (no inbound edge): how it moves through its input.
        Any op without input of its own emits everything in the first epoch."""
        return OncePlanner()

    def planner_for(self, control: JobControl) -> SourcePlanner:
        """``planner``, for a source whose planner needs more of the job than its Redis
        (``source.jdbc``: the connections and the job's principal)."""
        return self.planner(control.redis)


class SourceOp(Op):
    """A source kind: what it reads (``apply``) and its planner (its boundedness is the
    kind's, ``ProcessorKind.bounded``)."""


ParamsT = TypeVar("ParamsT", bound=BaseModel)


def params_of(ctx: OpContext, kind: type[ParamsT]) -> ParamsT:
    if not isinstance(ctx.params, kind):
        raise EngineError(f"vertex {ctx.vertex.name}: params are not {kind.__name__}")
    return ctx.params


def outbox_capacity(ctx: OpContext) -> int:
    """The most items a sender that batches in Python hands over at once: the least
    ``outbox_capacity`` of its outbound edges (SPEC §3)."""
    return min((e.config.outbox_capacity for e in ctx.outbound), default=DEFAULT_OUTBOX)


def read_once(ctx: OpContext) -> bool:
    """A bounded source in an epoch run reads everything in the first epoch only."""
    return ctx.epoch is None or bool(ctx.epoch.ranges[ctx.vertex.name].get("all", True))


def nothing(frame: DataFrame) -> DataFrame:
    """The same columns, no rows (Spark plans it without running a task)."""
    return frame.where(F.lit(False))
