"""``GET /v1/jobs/{id}/logs`` and the ``log`` events: a failing custom processor's job, run by
a real worker, shows its exception chain with the processor's Python traceback."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import httpx
import pytest

from jetspark.sdk import DAG, Client, Edge, JobNotCompleted
from tests.api.conftest import TOKEN
from worker.loop import Worker


@pytest.fixture
def client(api_url: str) -> Iterator[Client]:
    with Client(api_url, TOKEN) as sdk:
        yield sdk


def failing() -> DAG:
    dag = DAG("fails-on-3", {"members": 1, "local_parallelism": 1})
    items = dag.new_vertex("items", "source.items", items=[{"value": v} for v in range(1, 6)])
    fail = dag.new_vertex(
        "fail_on", "python",
        **{"class": "jetspark.example_processors.diagnostics:FailOn"},
        args={"field": "value", "value": 3},
    )  # fmt: skip
    dag.edge(Edge.between(items, fail)).edge(Edge.between(fail, dag.new_vertex("o", "sink.logger")))
    return dag


@pytest.mark.spark
@pytest.mark.slow
def test_a_failing_processors_traceback_is_in_the_jobs_logs(
    client: Client, worker: Worker, http: httpx.Client
) -> None:
    del worker
    job = client.submit(failing())
    with pytest.raises(JobNotCompleted, match="vertex 'fail_on' failed"):
        client.wait(job, progress=False, check=True)
    lines = client.logs(job)
    assert [line["seq"] for line in lines] == list(range(len(lines)))
    events = [line["event"] for line in lines]
    assert events[0] == "job claimed" and "job failed" in events
    failed = lines[events.index("job failed")]
    assert failed["level"] == "warning"
    chain = failed["exception"]
    assert chain[0]["type"] == "VertexFailed"
    assert chain[0]["message"].startswith("vertex 'fail_on' failed: ValueError")
    told = json.dumps(chain)
    assert "refusing value=3" in told and "diagnostics.py" in told, json.dumps(chain, indent=1)
    # The Spark task told its own error too, with the processor's traceback.
    (task,) = [line for line in lines if line.get("fields", {}).get("source") == "task"]
    assert task["level"] == "error" and task["fields"]["vertex"] == "fail_on"
    assert task["event"].startswith("vertex 'fail_on' processor 0 failed in process: ValueError")
    assert "refusing value=3" in json.dumps(task["exception"])

    # The FAILED view carries the same chain.
    view = http.get(f"/v1/jobs/{job.id}").json()
    assert view["status"] == "FAILED" and view["error"]["chain"] == chain

    page = http.get(f"/v1/jobs/{job.id}/logs", params={"from": 1, "size": 1}).json()
    assert page["lines"] == lines[1:2]
    assert page["total"] == len(lines) and page["first"] == 0

    # The same lines came as ``log`` events (read from the stream's start).
    with http.stream(
        "GET", f"/v1/jobs/{job.id}/events", headers={"Last-Event-ID": "0.0-0"}
    ) as stream:
        kinds = [
            line.removeprefix("event: ")
            for line in stream.iter_lines()
            if line.startswith("event:")
        ]
    assert kinds.count("log") == len(lines) and kinds[-1] == "end"


@pytest.mark.spark
@pytest.mark.slow
def test_what_a_python_processor_logs_and_prints_is_in_its_jobs_logs(
    client: Client, worker: Worker
) -> None:
    del worker
    dag = DAG("chatty", {"members": 1, "local_parallelism": 2})
    items = dag.new_vertex("items", "source.items", items=[{"value": v} for v in "abcd"])
    chatty = dag.new_vertex(
        "chatty", "python", **{"class": "jetspark.example_processors.diagnostics:LogEach"}
    )
    dag.edge(Edge.between(items, chatty)).edge(
        Edge.between(chatty, dag.new_vertex("out", "sink.results"))
    )
    job = client.submit(dag)
    client.wait(job, progress=False, check=True)
    lines = client.logs(job)
    told = [line for line in lines if line.get("fields", {}).get("vertex") == "chatty"]
    logged = sorted(
        line["event"].rsplit(" ", 1)[1]
        for line in told
        if line["fields"]["source"] == "logging:jetspark.example_processors.diagnostics"
    )
    printed = sorted(line["event"] for line in told if line["fields"]["source"] == "stdout")
    assert logged == list("abcd"), lines
    assert printed == [f"printed {v}" for v in "abcd"]
    assert {line["level"] for line in told} == {"info"}
    assert {line["fields"]["processor"] for line in told} <= {0, 1}
    # Kept in the order they came, between the worker's own lines.
    events = [line["event"] for line in lines]
    assert events.index("job claimed") < lines.index(told[0]) < events.index("job completed")


@pytest.mark.parametrize(
    "params", [{"from": -1}, {"size": 0}, {"from": "x"}, {"size": 10**9}], ids=str
)
def test_bad_paging_is_a_422_problem(http: httpx.Client, params: dict[str, str | int]) -> None:
    job = http.post("/v1/jobs", json=failing().to_json()).json()
    answer = http.get(f"/v1/jobs/{job['id']}/logs", params=params)
    assert answer.status_code == 422
    assert answer.headers["content-type"] == "application/problem+json"
    http.post(f"/v1/jobs/{job['id']}/cancel")


def test_an_unknown_job_has_no_logs(http: httpx.Client) -> None:
    answer = http.get(f"/v1/jobs/{uuid.uuid4()}/logs")
    assert answer.status_code == 404
    assert answer.headers["content-type"] == "application/problem+json"
