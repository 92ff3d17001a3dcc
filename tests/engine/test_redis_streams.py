"""``source.redis_stream`` and ``sink.redis_stream``, and ``source.files`` watching a directory.

Streaming jobs run in a thread on the shared SparkSession with a ``JobControl`` pointing at the
test Redis; the test polls their output (with a deadline) and stops them with
``control.cancelled`` once everything expected is there.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis
from pyspark.sql import SparkSession

from jetspark.dag import kinds as p
from jetspark.dag.errors import DagValidationError
from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from tests.engine.conftest import RunDag, job_body, run_runnable
from tests.engine.epoch_logs import MemoryEpochLog, WorkerLost
from worker.engine import JobControl, RunnableJob
from worker.engine.contract import EpochLog, RedisTarget
from worker.engine.ops.sources import RedisStreamSourceOp
from worker.engine.redis_streams import RedisStreamPlanner, parse_id, write_stream
from worker.engine.runner import JobCancelled

NAMESPACE = f"engine-test-{uuid.uuid4().hex[:8]}"
TARGET = RedisTarget("unused", NAMESPACE)
"""Jobs here are the local principal's: their streams live under its prefix in NAMESPACE."""


class UserStreams:
    """Redis as a job's user sees it: a stream is named without the principal's prefix,
    which every call here adds (as the engine does)."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    @staticmethod
    def key(name: str) -> str:
        return name if name.startswith(NAMESPACE) else TARGET.user_stream(name)

    def xadd(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self.client.xadd(self.key(name), *args, **kwargs)

    def xlen(self, name: str) -> Any:
        return self.client.xlen(self.key(name))

    def xrange(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self.client.xrange(self.key(name), *args, **kwargs)

    def delete(self, *names: str) -> Any:
        return self.client.delete(*(self.key(n) for n in names))

    def scan_iter(self, *args: Any, **kwargs: Any) -> Any:
        return self.client.scan_iter(*args, **kwargs)


@pytest.fixture(name="redis_client")
def user_streams(redis_client: redis.Redis) -> Any:
    return UserStreams(redis_client)


@pytest.fixture
def names(redis_client: redis.Redis) -> Iterator[Callable[[str], str]]:
    """Unique stream names, deleted afterwards."""
    made: list[str] = []

    def name(stem: str) -> str:
        made.append(f"test-{stem}-{uuid.uuid4().hex[:8]}")
        return made[-1]

    yield name
    if made:
        redis_client.delete(*made)


def entries(client: redis.Redis, stream: str) -> list[tuple[str, dict[str, str]]]:
    found: Any = client.xrange(stream)
    return [(str(i), {str(k): str(v) for k, v in f.items()}) for i, f in found]


# --- params and planning (no Spark) ----------------------------------------------------------


def test_stream_names_are_checked_and_the_source_is_unbounded() -> None:
    def body(params: dict[str, Any]) -> dict[str, Any]:
        return job_body(
            [
                {"name": "in", "processor": "source.redis_stream", "params": params},
                {"name": "out", "processor": "sink.redis_stream", "params": {"stream": "o"}},
            ],
            [{"from": "in", "to": "out"}],
        )

    bad_params: list[dict[str, Any]] = [
        {"streams": []},
        {"streams": [""]},
        {"streams": ["a\x00b"]},
        {"streams": ["a", "a"]},
        {"streams": ["a"], "start": "now"},
        {"streams": ["a"], "max_per_epoch": 0},
    ]
    for bad in bad_params:
        with pytest.raises(DagValidationError):
            validate_job(JobSpec.model_validate(body(bad)))
    dag = validate_job(JobSpec.model_validate(body({"streams": ["a", "b"], "start": "$"})))
    assert not dag.kind("in").is_bounded(dag.params["in"])
    bad_sink = body({"streams": ["a"]})
    bad_sink["dag"]["vertices"][1]["params"] = {"stream": "o\x00"}
    with pytest.raises(DagValidationError):
        validate_job(JobSpec.model_validate(bad_sink))


def test_the_planner_reads_from_the_start_in_bounded_ranges(
    redis_client: redis.Redis, redis_url: str, names: Callable[[str], str]
) -> None:
    a, b, missing = names("a"), names("b"), names("missing")
    ids_a = [str(redis_client.xadd(a, {"n": str(i)})) for i in range(5)]
    ids_b = [str(redis_client.xadd(b, {"n": str(i)})) for i in range(2)]
    params = p.RedisStreamSource(streams=[a, b, missing], max_per_epoch=7)
    planner = RedisStreamSourceOp().planner(RedisTarget(redis_url, NAMESPACE))
    assert isinstance(planner, RedisStreamPlanner)
    offsets = planner.start(params, 0)
    planned = planner.plan(params, offsets, 0, max_items=1000)  # 7 // 3 streams: 2 each
    assert planned["streams"] == {
        a: {"after": "0-0", "until": ids_a[1]},
        b: {"after": "0-0", "until": ids_b[1]},
        missing: {"after": "0-0", "until": None},
    }
    offsets = planner.advance(params, offsets, planned)
    planned = planner.plan(params, offsets, 0, max_items=3)  # the job's cap wins: 1 each
    assert planned["streams"][a] == {"after": ids_a[1], "until": ids_a[2]}
    assert planned["streams"][b]["until"] is None
    offsets = planner.advance(params, offsets, planned)
    assert offsets["last"] == {a: ids_a[2], b: ids_b[1], missing: "0-0"}
    planned = planner.plan(params, offsets, 0, max_items=1000)
    assert planned["streams"][a] == {"after": ids_a[2], "until": ids_a[4]}
    offsets = planner.advance(params, offsets, planned)
    assert planner.is_empty(planner.plan(params, offsets, 0, max_items=1000))
    assert not planner.exhausted(params, offsets)


def test_start_dollar_reads_only_what_is_added_after_the_job_started(
    redis_client: redis.Redis, redis_url: str, names: Callable[[str], str]
) -> None:
    s, empty = names("s"), names("empty")
    for i in range(3):
        redis_client.xadd(s, {"n": str(i)})
    params = p.RedisStreamSource(streams=[s, empty], start="$")
    planner = RedisStreamPlanner(redis_url, TARGET.user_stream)
    offsets = planner.start(params, 0)
    assert planner.is_empty(planner.plan(params, offsets, 0, max_items=100))
    later = [str(redis_client.xadd(s, {"n": str(i)})) for i in range(3, 5)]
    first_in_empty = str(redis_client.xadd(empty, {"n": "x"}))
    planned = planner.plan(params, offsets, 0, max_items=100)
    assert planned["streams"][s]["until"] == later[-1]
    assert planned["streams"][empty] == {"after": "0-0", "until": first_in_empty}


# --- the sink ----------------------------------------------------------------------------------


@pytest.mark.spark
def test_a_replayed_epoch_writes_nothing_twice(
    spark: SparkSession, redis_client: redis.Redis, redis_url: str, names: Callable[[str], str]
) -> None:
    out = names("out")
    rows = [{"k": f"key-{i}", "v": i} for i in range(10)]
    frame = spark.createDataFrame(rows, "k string, v bigint").repartition(3)
    epoch_ms = 1_700_000_000_000 + 4
    # The lost attempt wrote the first three items (the sink writes in the items' JSON order).
    for n in range(3):
        redis_client.xadd(out, {"k": f"key-{n}", "v": str(n)}, id=f"{epoch_ms}-{n}")
    replay = write_stream(
        frame, url=redis_url, stream=UserStreams.key(out), maxlen=None, epoch_ms=epoch_ms
    )
    assert (replay.written, replay.skipped) == (7, 3)
    again = write_stream(
        frame, url=redis_url, stream=UserStreams.key(out), maxlen=None, epoch_ms=epoch_ms
    )
    assert (again.written, again.skipped) == (0, 10)
    written = entries(redis_client, out)
    assert [i for i, _ in written] == [f"{epoch_ms}-{n}" for n in range(10)]
    assert [f for _, f in written] == [{"k": r["k"], "v": str(r["v"])} for r in rows]
    # The next epoch goes on after it; a stream written ahead of the epoch gets Redis's ids.
    nxt = write_stream(
        frame.limit(2), url=redis_url, stream=UserStreams.key(out), maxlen=12, epoch_ms=epoch_ms + 1
    )
    assert (nxt.written, nxt.skipped, redis_client.xlen(out)) == (2, 0, 12)
    assert parse_id(entries(redis_client, out)[-1][0]) == (epoch_ms + 1, 1)
    behind = write_stream(
        frame.limit(1), url=redis_url, stream=UserStreams.key(out), maxlen=None, epoch_ms=5
    )
    assert (behind.written, behind.skipped) == (1, 0)
    assert redis_client.xlen(out) == 13


@pytest.mark.spark
def test_a_bounded_job_writes_every_item_with_non_strings_as_json(
    run_dag: RunDag,
    redis_client: redis.Redis,
    redis_url: str,
    names: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_REDIS_URL", redis_url)
    monkeypatch.setenv("JETSPARK_REDIS_NAMESPACE", NAMESPACE)
    out = names("out")
    items = [{"word": f"w{i}", "n": i, "ok": i % 2 == 0, "opt": "x" if i % 2 else None}
             for i in range(6)]  # fmt: skip
    body = job_body(
        [
            {"name": "src", "processor": "source.items", "params": {"items": items}},
            {"name": "out", "processor": "sink.redis_stream", "params": {"stream": out}},
        ],
        [{"from": "src", "to": "out"}],
        members=1,
        local_parallelism=2,
    )
    outcome, _ = run_dag(body)
    assert outcome.vertex_counts["out"].items_in == 6
    stored = [f for _, f in entries(redis_client, out)]
    expected = [
        {"word": i["word"], "n": str(i["n"]), "ok": json.dumps(i["ok"]), "opt": i["opt"] or "null"}
        for i in items
    ]
    assert sorted(stored, key=lambda f: f["word"]) == expected


# --- streaming jobs in a thread ----------------------------------------------------------------


@dataclass
class Running:
    control: JobControl
    thread: threading.Thread
    ended: list[BaseException] = field(default_factory=list)

    def poll(self, ready: Callable[[], bool], *, what: str, deadline_s: float = 120) -> None:
        deadline = time.monotonic() + deadline_s
        while not ready():
            if not self.thread.is_alive():
                raise AssertionError(f"the job ended before {what}: {self.ended}")
            assert time.monotonic() < deadline, f"not within {deadline_s} s: {what}"
            time.sleep(0.05)  # polling the job's output, bounded by the deadline

    def stop(self) -> None:
        self.control.cancelled.set()
        self.thread.join(timeout=120)
        assert not self.thread.is_alive(), "the job did not stop"
        assert len(self.ended) == 1 and isinstance(self.ended[0], JobCancelled), self.ended


@pytest.fixture
def start_stream(
    spark: SparkSession,
    redis_url: str,
    redis_client: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Callable[..., Running]]:
    monkeypatch.setenv("JETSPARK_STREAM_EPOCH_INTERVAL_MS", "200")
    namespace = NAMESPACE
    started: list[Running] = []

    def start(
        body: dict[str, Any],
        *,
        epochs: EpochLog | None = None,
        job_id: uuid.UUID | None = None,
        in_thread: bool = True,
    ) -> Running:
        spec = JobSpec.model_validate(body)
        job = RunnableJob(
            id=job_id or uuid.uuid4(),
            attempt=1,
            plan=build_plan(validate_job(spec)).model_dump(mode="json"),
        )
        control = JobControl(
            job_group=f"stream-{job.id}",
            cancelled=threading.Event(),
            epochs=epochs,
            redis=RedisTarget(redis_url, namespace),
        )
        running = Running(control, threading.Thread(target=lambda: None, daemon=True))
        if not in_thread:
            run_runnable(spark, job, control)
            return running

        def perform() -> None:
            try:
                run_runnable(spark, job, control)
            except BaseException as error:
                running.ended.append(error)

        running.thread = threading.Thread(target=perform, daemon=True)
        running.thread.start()
        started.append(running)
        return running

    yield start
    for running in started:
        running.control.cancelled.set()
        running.thread.join(timeout=120)
    leftovers = [
        *redis_client.scan_iter(f"{namespace}*"),
        *redis_client.scan_iter(f"{{{namespace}}}*"),
    ]
    if leftovers:
        redis_client.delete(*leftovers)


@pytest.mark.spark
def test_a_watched_directory_reads_each_new_file_exactly_once(
    start_stream: Callable[[dict[str, Any]], Running], tmp_path: Path
) -> None:
    watched, out = tmp_path / "in", tmp_path / "out"
    watched.mkdir()
    files, sink = {"path": str(watched), "watch": True}, {"path": str(out), "format": "json"}
    body = job_body(
        [
            {"name": "lines", "processor": "source.files", "params": files},
            {"name": "upper", "processor": "map", "params": {"select": {"line": "upper(line)"}}},
            {"name": "out", "processor": "sink.files", "params": sink},
        ],
        [{"from": "lines", "to": "upper"}, {"from": "upper", "to": "out"}],
        members=1,
        local_parallelism=2,
    )  # fmt: skip

    def output() -> list[str]:
        return [
            json.loads(line)["line"]
            for part in sorted(out.glob("epoch=*/part-*"))
            for line in part.read_text().splitlines()
        ]

    def drop(name: str, lines: list[str]) -> None:
        hidden = watched / f".{name}"  # the listing skips dot files: the file appears whole
        hidden.write_text("".join(f"{line}\n" for line in lines))
        hidden.rename(watched / name)

    running = start_stream(body)
    written: list[str] = []
    for i in range(3):
        lines = [f"file {i} line {j}" for j in range(4)]
        drop(f"part-{i}.txt", lines)
        written += lines
        expected = len(written)
        running.poll(lambda: len(output()) >= expected, what=f"file {i} read")  # noqa: B023
    running.stop()
    assert sorted(output()) == sorted(line.upper() for line in written)
    assert len({part.parent for part in out.glob("epoch=*/part-*")}) >= 3  # one epoch a file


@pytest.mark.spark
def test_a_redis_stream_maps_into_another_stream(
    start_stream: Callable[[dict[str, Any]], Running],
    redis_client: redis.Redis,
    names: Callable[[str], str],
) -> None:
    source, out = names("in"), names("out")
    ids = [str(redis_client.xadd(source, {"w": f"word{i}"})) for i in range(4)]
    body = job_body(
        [
            {"name": "in", "processor": "source.redis_stream", "params": {"streams": [source]}},
            {"name": "shout", "processor": "map",
             "params": {"select": {"from_id": "id", "ts": "ts", "w": "upper(fields['w'])"}}},
            {"name": "out", "processor": "sink.redis_stream", "params": {"stream": out}},
        ],
        [{"from": "in", "to": "shout"}, {"from": "shout", "to": "out"}],
        members=1,
        local_parallelism=1,
    )  # fmt: skip
    running = start_stream(body)
    running.poll(lambda: redis_client.xlen(out) >= 4, what="the first entries copied")
    ids += [str(redis_client.xadd(source, {"w": f"word{i}"})) for i in range(4, 7)]
    running.poll(lambda: redis_client.xlen(out) >= 7, what="the entries added later")
    running.stop()
    copied = entries(redis_client, out)
    assert sorted(f["from_id"] for _, f in copied) == sorted(ids)
    assert {f["from_id"]: f["w"] for _, f in copied} == {i: f"WORD{n}" for n, i in enumerate(ids)}
    assert all(f["ts"] == str(parse_id(f["from_id"])[0]) for _, f in copied)
    epochs = {parse_id(i)[0] for i, _ in copied}
    assert len(epochs) >= 2  # one ms per epoch after the job's t0: the later entries' epoch


@pytest.mark.spark
def test_two_streams_with_parallelism_two_each_go_to_their_processor(
    start_stream: Callable[[dict[str, Any]], Running],
    redis_client: redis.Redis,
    names: Callable[[str], str],
) -> None:
    s0, s1, out = names("s0"), names("s1"), names("out")
    sent = {s: [str(redis_client.xadd(s, {"v": f"{s}:{i}"})) for i in range(5)] for s in (s0, s1)}
    body = job_body(
        [
            {"name": "in", "processor": "source.redis_stream",
             "params": {"streams": [s0, s1], "max_per_epoch": 4}},
            {"name": "tag", "processor": "map",
             "params": {"select": {"stream": "stream", "id": "id", "v": "fields['v']",
                                   "g": "spark_partition_id()"}}},
            {"name": "out", "processor": "sink.redis_stream", "params": {"stream": out}},
        ],
        [{"from": "in", "to": "tag"}, {"from": "tag", "to": "out"}],
        members=1,
        local_parallelism=2,
    )  # fmt: skip
    running = start_stream(body)
    running.poll(lambda: redis_client.xlen(out) >= 10, what="both streams copied")
    running.stop()
    copied = [f for _, f in entries(redis_client, out)]
    assert len(copied) == 10
    for g, s in enumerate((s0, s1)):
        mine = [f for f in copied if f["stream"] == s]
        assert sorted(f["id"] for f in mine) == sorted(sent[s])
        assert {f["g"] for f in mine} == {str(g)}
        assert {f["v"] for f in mine} == {f"{s}:{i}" for i in range(5)}
    # At most 4 entries an epoch (2 a stream): the 10 entries took 3 epochs at least.
    assert len({parse_id(i)[0] for i, _ in entries(redis_client, out)}) >= 3


@pytest.mark.spark
@pytest.mark.parametrize("lost", [1, 2], ids=["before-any-snapshot", "after-a-snapshot"])
def test_an_epoch_replayed_after_a_lost_commit_writes_no_duplicate(
    lost: int,
    start_stream: Callable[..., Running],
    redis_client: redis.Redis,
    redis_url: str,
    names: Callable[[str], str],
) -> None:
    source, out = names("in"), names("out")
    ids = [str(redis_client.xadd(source, {"n": str(i)})) for i in range(6)]
    body = job_body(
        [
            {"name": "in", "processor": "source.redis_stream",
             "params": {"streams": [source], "max_per_epoch": 2}},
            {"name": "copy", "processor": "map", "params": {"select": {"from_id": "id"}}},
            {"name": "out", "processor": "sink.redis_stream", "params": {"stream": out}},
        ],
        [{"from": "in", "to": "copy"}, {"from": "copy", "to": "out"}],
        members=1,
        local_parallelism=1,
        processing_guarantee="exactly_once",
        snapshot_interval_ms=200,
    )  # fmt: skip
    # Lost at epoch 1, the t0 of the ids comes with the planned ranges; at epoch 2, with the
    # snapshot of epoch 1 too.
    log = MemoryEpochLog(lose_at=lost)
    job_id = uuid.uuid4()
    # `lost` is not committed; the epoch after it ran while it committed (its failure shows
    # at the next barrier), so both were written and both are replayed.
    with pytest.raises(WorkerLost):
        start_stream(body, epochs=log, job_id=job_id, in_thread=False)
    assert [f["from_id"] for _, f in entries(redis_client, out)] == ids[: 2 * (lost + 1)]
    replay = start_stream(body, epochs=log, job_id=job_id)  # another worker takes over
    replay.poll(lambda: redis_client.xlen(out) >= 6, what="the epochs after the lost one")
    replay.stop()
    written = entries(redis_client, out)
    assert [f["from_id"] for _, f in written] == ids
    assert len({parse_id(i)[0] for i, _ in written}) == 3  # epochs 1, 2 and 3, one replayed
