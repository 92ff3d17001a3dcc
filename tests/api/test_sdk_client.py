"""The SDK against the live API and a real worker: its checks are the server's, its
``Client`` submits, follows (SSE), reads results, suspends and cancels."""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from jetspark.queue.keys import Keys
from jetspark.sdk import DAG, ApiError, Client, DagValidationError, Edge, JobNotCompleted
from tests.api.conftest import TOKEN
from tests.api.leftovers import no_leftovers
from tests.polling import poll
from worker.loop import Worker

pytestmark = pytest.mark.usefixtures(no_leftovers.__name__)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TEXT = ["to be or not to be", "that is the question"]


@pytest.fixture
def client(api_url: str) -> Iterator[Client]:
    with Client(api_url, TOKEN) as sdk:
        yield sdk


def word_count() -> DAG:
    dag = DAG("sdk-word-count")
    lines = dag.new_vertex("lines", "source.items", items=[{"line": t} for t in TEXT])
    tok = dag.new_vertex("tokenize", "flat_map", explode="split(line, ' ')", **{"as": "word"})
    count = dag.new_vertex("count", "aggregate", key="word", aggregations={"n": "count(*)"})
    dag.edge(Edge.between(lines, tok))
    dag.edge(Edge.between(tok, count).partitioned("word").distributed())
    dag.edge(Edge.between(count, dag.new_vertex("out", "sink.results")))
    return dag


def mistaken() -> DAG:
    dag = DAG("mistaken")
    table = dag.new_vertex("table", "source.items", items=[{"k": 1}])
    stream = dag.new_vertex("stream", "source.items", items=[{"k": 1}])
    join = dag.new_vertex("join", "hash_join", build_key="k", probe_key="nope(k)")
    dag.new_vertex("orphan", "map", select={"k": "k"})
    dag.edge(Edge.from_(table).to(join, 0))
    dag.edge(Edge.from_(stream).to(join, 1))
    return dag


def test_validate_gives_the_servers_pointers_and_messages(client: Client) -> None:
    for dag in (mistaken(), mistaken().edge(Edge.between("join", "orphan"))):
        with pytest.raises(DagValidationError) as caught:
            dag.validate()
        with pytest.raises(ApiError) as answer:
            client.validate(dag)
        assert answer.value.status == 422
        assert answer.value.errors == [
            {"pointer": q.pointer, "message": q.message} for q in caught.value.problems
        ]


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_the_api_accepts_every_example_the_sdk_emits(client: Client, path: Path) -> None:
    report = client.validate(DAG.from_json(json.loads(path.read_text())))
    assert report.valid


def test_a_refused_submission_is_an_api_error_with_pointers(client: Client) -> None:
    with pytest.raises(ApiError) as caught:
        client.submit(mistaken())
    assert caught.value.status == 422
    assert [e["pointer"] for e in caught.value.errors] == ["/dag/vertices/2/params/probe_key"]


@pytest.mark.spark
@pytest.mark.slow
def test_submit_wait_and_results_as_records_and_a_frame(client: Client, worker: Worker) -> None:
    del worker
    job = client.submit(word_count())
    progress = io.StringIO()
    final = client.wait(job, progress=progress, check=True)
    assert final.status.value == "COMPLETED"
    assert progress.getvalue().splitlines()[-1].startswith("COMPLETED   attempt=1")
    expected = Counter(word for line in TEXT for word in line.split())
    assert {r["key"]: r["n"] for r in client.results(job)} == expected
    assert {r["key"]: r["n"] for r in client.results(job, page_size=2)} == expected
    frame = client.results(job).to_pandas()
    assert dict(zip(frame["key"], frame["n"], strict=True)) == expected


@pytest.mark.spark
@pytest.mark.slow
def test_a_stream_is_suspended_at_a_snapshot_then_cancelled(
    client: Client, worker: Worker, redis_client: redis.Redis, redis_namespace: str
) -> None:
    dag = DAG(
        "sdk-stream",
        {"members": 1, "local_parallelism": 1, "processing_guarantee": "exactly_once",
         "snapshot_interval_ms": 200},
    )  # fmt: skip
    numbers = dag.new_vertex("numbers", "source.sequence", count=None, rate_per_s=50)
    dag.edge(Edge.between(numbers, dag.new_vertex("out", "sink.results")))
    job = client.submit(dag)
    poll(lambda: bool(client.snapshots(job)), what="a committed snapshot", every_s=0.1)
    client.suspend(job)
    poll(lambda: client.get(job).status.value == "SUSPENDED", what="suspended", every_s=0.1)
    snapshot = client.snapshots(job)[0]
    assert snapshot.epoch >= 1 and snapshot.committed_at is not None
    client.cancel(job)
    with pytest.raises(JobNotCompleted, match="CANCELLED"):
        client.wait(job, progress=False, check=True)
    assert any(event.kind == "end" for event in client.events(job))

    # Deleted, the job leaves only its exported snapshot, which outlives it until deleted.
    name = f"sdk-{job.id.hex[:8]}"
    exported = client.export_snapshot(job, name)
    thread = worker.threads.get(job.id)
    if thread is not None:
        thread.result(timeout=60)  # the cancelled run has written its last
    client.delete(job)
    with pytest.raises(ApiError, match="does not exist"):
        client.get(job)
    left = {str(k) for k in redis_client.scan_iter(match=f"*{job.id}*")}
    assert left <= set(Keys(redis_namespace).snapshot_keys(job.id, exported.snapshot_id, 271))
    client.delete_snapshot(job, name)
    assert not list(redis_client.scan_iter(match=f"*{job.id}*"))
    with pytest.raises(ApiError, match="no snapshot named"):
        client.delete_snapshot(job, name)
