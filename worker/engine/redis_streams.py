"""Redis streams in and out of a job: ``source.redis_stream`` and ``sink.redis_stream``.

A stream name is the user's: the job's principal's prefix is added
(``<ns>:user:<principal>:stream:<name>``, ``Keys.user_stream``), so no name reaches the
server's own keys or another principal's; the ``stream`` column shows the user's name.

Source: the driver plans, per stream and epoch, the entries after the last id read (exclusive)
up to an id it fixes (inclusive), at most ``max_per_epoch`` / ``max_items_per_epoch`` in all;
a Lua script finds that id in Redis, so no entry crosses to the driver. Spark tasks then read
exactly those entries with XRANGE: processor g reads streams g, g+P, g+2P... in id order.

Sink: one task writes the epoch's items in a deterministic order with explicit ids
``<job_t0_ms + epoch>-<n>``: a replayed epoch gets the same ids, and Redis refuses an id at
or below the stream's top, so what the lost attempt wrote is skipped (counted, not written).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import pyarrow as pa
import redis
import structlog
from pydantic import BaseModel
from pyspark import TaskContext
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, MapType, StringType, StructField, StructType

from jetspark.dag import kinds as p
from jetspark.dag.expressions import quote_identifier
from jetspark.redis_client import RedisClient, connect

log = structlog.get_logger("jetspark.engine")

Json = dict[str, Any]
SCHEMA = StructType(
    [
        StructField("stream", StringType()),
        StructField("id", StringType()),
        StructField("ts", LongType()),
        StructField("fields", MapType(StringType(), StringType())),
    ]
)
_ARROW = pa.schema(
    [
        ("stream", pa.string()),
        ("id", pa.string()),
        ("ts", pa.int64()),
        ("fields", pa.map_(pa.string(), pa.string())),
    ]
)
_WRITE_REPORT = StructType([StructField("written", LongType()), StructField("skipped", LongType())])
BATCH = 1000
"""Entries per XRANGE call (and per Arrow batch), XADDs per pipeline round trip."""
ORDER = "__jetspark_order"

# The id of the last of at most ARGV[2] entries after ARGV[1] (exclusive), found in pages
# inside Redis: the driver learns the range's end without receiving its entries.
_LAST_ID = """
local left = tonumber(ARGV[2])
local from = '(' .. ARGV[1]
local last = false
while left > 0 do
  local page = math.min(left, 1000)
  local entries = redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', page)
  local n = #entries
  if n == 0 then break end
  last = entries[n][1]
  left = left - n
  if n < page then break end
  from = '(' .. last
end
return last
"""


def parse_id(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def top_id(client: RedisClient, stream: str) -> str | None:
    """The id of the stream's last entry (None for a missing or empty stream)."""
    entries = client.xrevrange(stream, "+", "-", count=1)
    if not entries:
        return None
    first = entries[0][0]
    return first.decode() if isinstance(first, bytes) else str(first)


@cache
def _client(url: str, cluster: bool) -> RedisClient:
    """One pooled client per Redis on the driver (planning runs there every epoch)."""
    return connect(url, cluster=cluster, decode_responses=True)


class RedisStreamPlanner:
    """``source.redis_stream``: offsets ``{"last": {stream: id}}``, the last id read per
    stream; a range ``{"streams": {stream: {"after": id, "until": id | None}}}``."""

    def __init__(self, url: str, key: Callable[[str], str] = str, *, cluster: bool = False) -> None:
        self.url, self.cluster = url, cluster
        self.key = key
        """The Redis key of a stream name (the principal's prefix added)."""

    def start(self, params: BaseModel, now_ms: int) -> Json:
        assert isinstance(params, p.RedisStreamSource)
        client = _client(self.url, self.cluster)
        last: dict[str, str] = {}
        for stream in params.streams:
            # "$" is resolved once, now: a replay or a restart reads from the same id.
            top = top_id(client, self.key(stream)) if params.start == "$" else None
            last[stream] = top or "0-0"
        return {"last": last}

    def plan(self, params: BaseModel, offsets: Json, now_ms: int, max_items: int) -> Json:
        assert isinstance(params, p.RedisStreamSource)
        limit = min(max_items, params.max_per_epoch or max_items)
        per_stream = max(1, limit // len(params.streams))
        client = _client(self.url, self.cluster)
        script = client.register_script(_LAST_ID)
        streams: dict[str, Json] = {}
        for stream in params.streams:
            after = str(offsets["last"].get(stream, "0-0"))
            until = script(keys=[self.key(stream)], args=[after, per_stream])
            streams[stream] = {"after": after, "until": str(until) if until else None}
        return {"streams": streams}

    def advance(self, params: BaseModel, offsets: Json, planned: Json) -> Json:
        last = dict(offsets["last"])
        for stream, bounds in planned["streams"].items():
            if bounds["until"] is not None:
                last[stream] = bounds["until"]
        return {**offsets, "last": last}

    def exhausted(self, params: BaseModel, offsets: Json) -> bool:
        return False

    def is_empty(self, planned: Json) -> bool:
        return all(bounds["until"] is None for bounds in planned["streams"].values())


def stream_frame(
    spark: SparkSession,
    url: str,
    ranges: list[tuple[str, str, str | None]],
    parallelism: int,
    key: Callable[[str], str] = str,
    *,
    cluster: bool = False,
    batch: int = BATCH,
) -> DataFrame:
    """``{stream, id, ts, fields}`` of each ``(stream, after, until]``; processor g reads
    ``ranges[g::parallelism]``, every stream in id order, from Redis key ``key(stream)``,
    ``batch`` entries per XRANGE and per Arrow batch (the edges' ``outbox_capacity``)."""

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for _ in batches:  # one seed row per processor
            pass
        g = TaskContext.get().partitionId()  # type: ignore[union-attr]
        mine = [r for r in ranges[g::parallelism] if r[2] is not None]
        if not mine:
            return
        client = connect(url, cluster=cluster)
        try:
            for stream, after, until in mine:
                yield from read_range(client, stream, key(stream), after, str(until), batch)
        finally:
            client.close()

    seeds = spark.range(parallelism, numPartitions=parallelism)
    return seeds.mapInArrow(read, SCHEMA)


def read_range(
    client: RedisClient, stream: str, key: str, after: str, until: str, batch: int = BATCH
) -> Iterator[pa.RecordBatch]:
    """The entries of ``(after, until]`` in Arrow batches of at most ``batch``."""
    low = f"({after}"
    while True:
        entries = client.xrange(key, low, until, count=batch)
        if not entries:
            return
        ids = [_text(entry_id) for entry_id, _ in entries]
        fields = [
            [(_text(k), _text(v)) for k, v in (values or {}).items()] for _, values in entries
        ]
        yield pa.RecordBatch.from_arrays(
            [
                pa.array([stream] * len(ids), pa.string()),
                pa.array(ids, pa.string()),
                pa.array([parse_id(i)[0] for i in ids], pa.int64()),
                pa.array(fields, _ARROW.field("fields").type),
            ],
            schema=_ARROW,
        )
        if ids[-1] == until or len(entries) < batch:
            return
        low = f"({ids[-1]}"


def _text(value: Any) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class Written:
    written: int
    skipped: int
    """Items whose id the stream already held: written by a lost attempt of the epoch."""


def write_stream(
    frame: DataFrame,
    *,
    url: str,
    stream: str,
    maxlen: int | None,
    epoch_ms: int,
    cluster: bool = False,
) -> Written:
    """XADD every item of ``frame`` to ``stream`` with id ``<epoch_ms>-<n>``.

    Fields are the item's columns: a string as it is, any other value as JSON (``null`` for
    a null). ``n`` numbers the items in the order of their fields' JSON text: the same items
    get the same ids whatever order they arrived in (a shuffle's order may differ in a
    replay). One task writes them all, in id order, as a stream must be written, and reports
    what it did through a Spark action (so the vertex's counts complete). Items with an id at
    or below the stream's top are skipped: a replayed epoch may find itself written, and the
    epoch after it too (it ran while this one committed). A stream whose top is past that
    (another producer writes it, or a lost at-least-once attempt ran later epochs) gets
    Redis's ids.
    """
    columns = list(frame.columns)
    encoded = frame.select(*[_as_text(frame, c).alias(c) for c in columns])
    ordered = (
        encoded.withColumn(
            ORDER, F.to_json(F.struct(*[F.col(quote_identifier(c)) for c in columns]))
        )
        .repartition(1)
        .sortWithinPartitions(ORDER)
        .drop(ORDER)
    )

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        client = connect(url, cluster=cluster, decode_responses=True)
        try:
            top = top_id(client, stream)
            ms, seq = parse_id(top) if top is not None else (-1, -1)
            own_ids = ms <= epoch_ms + 1
            done = already = n = 0
            pipe = client.pipeline(transaction=False)
            for batch in batches:
                for item in batch.to_pylist():
                    if own_ids and (ms > epoch_ms or (ms == epoch_ms and n <= seq)):
                        already += 1
                    else:
                        values = {c: "null" if v is None else v for c, v in item.items()}
                        entry_id = f"{epoch_ms}-{n}" if own_ids else "*"
                        pipe.xadd(
                            stream,
                            values or {"item": "{}"},
                            id=entry_id,
                            maxlen=maxlen,
                            approximate=False,
                        )
                    n += 1
                    if len(pipe) >= BATCH:
                        d, a = _flush(pipe)
                        done, already = done + d, already + a
            d, a = _flush(pipe)
            done, already = done + d, already + a
        finally:
            client.close()
        yield pa.RecordBatch.from_pydict(
            {"written": [done], "skipped": [already]},
            schema=pa.schema([("written", pa.int64()), ("skipped", pa.int64())]),
        )

    reports = ordered.mapInArrow(write, _WRITE_REPORT).collect()
    return Written(
        written=sum(int(r["written"]) for r in reports),
        skipped=sum(int(r["skipped"]) for r in reports),
    )


def _as_text(frame: DataFrame, column: str) -> Column:
    """A string column as it is; any other as its JSON text."""
    value = F.col(quote_identifier(column))
    if isinstance(frame.schema[column].dataType, StringType):
        return F.coalesce(value, F.lit("null"))
    # to_json takes structs, maps and arrays: a one-element array's text without its brackets.
    return F.regexp_extract(F.to_json(F.array(value)), r"^\[(.*)\]$", 1)


def _flush(pipe: Any) -> tuple[int, int]:
    """Send the queued XADDs: (written, already there)."""
    if not len(pipe):
        return 0, 0
    done = already = 0
    for reply in pipe.execute(raise_on_error=False):
        if isinstance(reply, redis.ResponseError) and "equal or smaller" in str(reply):
            already += 1  # another attempt of this epoch wrote it meanwhile
        elif isinstance(reply, Exception):
            raise reply
        else:
            done += 1
    return done, already


def now_ms() -> int:
    return int(time.time() * 1000)
