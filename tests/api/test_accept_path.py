"""One accept path: ``POST /v1/jobs``, ``POST /v1/dags:validate`` and the SDK's
``DAG.validate()`` give the same verdict and the same problems for the same body.

The bodies are the examples, each broken in every way the generator below knows (the ways
a body used to be accepted and then ignored, or failed late), and a few of their own; and
bodies hypothesis draws (``tests.dag_strategies.bodies``), broken at random by the same
mutations and by more (a dropped param, a dangling edge, a cycle, a bad expression, an
unknown field, ...).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from jetspark.dag.errors import DagValidationError
from jetspark.dag.model import JobSpec
from jetspark.jobs.accept import AcceptRules, accept
from jetspark.sdk import DAG
from jetspark.settings import DataSettings
from jetspark.webhooks.subscriptions import NotifyRefused
from tests.api.leftovers import no_leftovers
from tests.dag_strategies import bodies

# The accepted bodies are queued jobs, an endless example stream among them: cancelled when
# the module ends, so no later test's worker runs them.
pytestmark = pytest.mark.usefixtures(no_leftovers.__name__)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

Body = dict[str, Any]
Verdict = tuple[str, list[tuple[str, str]]]
"""("accepted", []) or (the problem type's slug, [(pointer, message), ...])."""


def _example(name: str) -> Body:
    body: Body = json.loads((EXAMPLES / f"{name}.json").read_text())
    return body


def _vertex(body: Body, processor: str) -> dict[str, Any]:
    return next(v for v in body["dag"]["vertices"] if v["processor"] == processor)


def _set(path: str, value: Any) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        *parents, last = path.split(".")
        here = body
        for part in parents:
            here = here[int(part)] if isinstance(here, list) else here.setdefault(part, {})
        here[last] = value

    return mutate


def _first_edge(**fields: Any) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        body["dag"]["edges"][0].update(fields)

    return mutate


def _window(**fields: Any) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        _vertex(body, "window")["params"].update(fields)

    return mutate


def _empty_items(body: Body) -> None:
    for vertex in body["dag"]["vertices"]:
        if vertex["processor"] == "source.items":
            vertex["params"]["items"] = []
            return


def _two_problems(body: Body) -> None:
    _first_edge(routing="unicast", key="x")(body)
    _set("config.backup_count", 2)(body)


MUTATIONS: dict[str, Callable[[Body], None]] = {
    "as it is": lambda body: None,
    "unicast edge with a key": _first_edge(routing="unicast", key="x"),
    "broadcast edge with a missing python partitioner": _first_edge(
        routing="broadcast", key=None, partitioner="python:nowhere:nothing"
    ),
    "all-to-one edge with a key": _first_edge(routing="all_to_one", key="x"),
    "at_least_once": _set("config.processing_guarantee", "at_least_once"),
    "snapshot interval": _set("config.snapshot_interval_ms", 500),
    "backup count": _set("config.backup_count", 1),
    "epoch interval": _set("config.epoch_interval_ms", 100),
    "notify without a webhook secret": _set("config.notify", ["https://example.com/hook"]),
    "an empty source.items": lambda body: _empty_items(body),
    "unknown processor": lambda body: body["dag"]["vertices"][0].update(processor="nope"),
    "NUL in the name": _set("name", "a\x00b"),
    "two problems at once": lambda body: _two_problems(body),
}

WINDOW_MUTATIONS: dict[str, Callable[[Body], None]] = {
    "tumbling without size": _window(type="tumbling", size_ms=None, slide_ms=None, gap_ms=None),
    "tumbling with a slide": _window(type="tumbling", size_ms=100, slide_ms=50, gap_ms=None),
    "session with a size": _window(type="session", size_ms=100, slide_ms=None, gap_ms=10),
    "session without a gap": _window(type="session", size_ms=None, slide_ms=None, gap_ms=None),
}


def _bodies() -> list[Any]:
    cases: list[Any] = []
    for path in sorted(EXAMPLES.glob("*.json")):
        for name, mutate in MUTATIONS.items():
            body = copy.deepcopy(_example(path.stem))
            mutate(body)
            cases.append(pytest.param(body, id=f"{path.stem}: {name}"))
    for name, mutate in WINDOW_MUTATIONS.items():
        body = copy.deepcopy(_example("stream-windows"))
        mutate(body)
        cases.append(pytest.param(body, id=f"stream-windows: {name}"))
    return cases


def _over_http(http: httpx.Client, path: str, body: Body) -> Verdict:
    response = http.post(
        path, content=json.dumps(body), headers={"content-type": "application/json"}
    )
    if response.is_success:
        return "accepted", []
    problem = response.json()
    errors = problem.get("errors") or [{"pointer": "", "message": problem["detail"]}]
    slug = str(problem["type"]).rsplit("/", 1)[-1]
    return slug, [(e["pointer"], e["message"]) for e in errors]


def _offline(body: Body, namespace: str) -> Verdict:
    try:
        DAG.from_json(body).validate(namespace=namespace)
    except NotifyRefused as refused:
        return "webhook-refused", list(refused.problems)
    except DagValidationError as refused:
        slug = "invalid-request" if type(refused).__name__ == "UnstorableText" else "invalid-dag"
        return slug, [(p.pointer, p.message) for p in refused.problems]
    except ValidationError:
        return "invalid-request", []  # not a job body at all: the API's model refuses it too
    return "accepted", []


def _assert_one_answer(http: httpx.Client, namespace: str, body: Body) -> Verdict:
    """The three doors give the same verdict with the same problems (a body the SDK's model
    refuses outright need only be an ``invalid-request`` over HTTP too); returns it."""
    validated = _over_http(http, "/v1/dags:validate", body)
    submitted = _over_http(http, "/v1/jobs", body)
    offline = _offline(body, namespace)
    assert validated == submitted
    if offline[0] == "invalid-request" and not offline[1]:
        assert submitted[0] == "invalid-request"
    else:
        assert offline == submitted
    return submitted


@pytest.mark.parametrize("body", _bodies())
def test_the_three_doors_give_one_answer(
    http: httpx.Client, redis_namespace: str, body: Body
) -> None:
    _assert_one_answer(http, redis_namespace, body)


Breakage = tuple[str, Callable[[Body], None]]
"""A name (for hypothesis' report) and what it does to a drawn body, in place."""


def _if_window(mutate: Callable[[Body], None]) -> Callable[[Body], None]:
    def maybe(body: Body) -> None:
        if any(v["processor"] == "window" for v in body["dag"]["vertices"]):
            mutate(body)

    return maybe


def _drop_param(at: int, which: int) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        vertices = body["dag"]["vertices"]
        params = vertices[at % len(vertices)].get("params") or {}
        if params:
            del params[sorted(params)[which % len(params)]]

    return mutate


def _unknown_processor(at: int) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        vertices = body["dag"]["vertices"]
        vertices[at % len(vertices)]["processor"] = "no.such.processor"

    return mutate


def _dangling_edge(at: int) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        edges = body["dag"]["edges"]
        edges[at % len(edges)]["to" if at % 2 else "from"] = "ghost"

    return mutate


def _back_edge(sender: int, receiver: int) -> Callable[[Body], None]:
    """An edge from a vertex back to itself or one before it: a cycle."""

    def mutate(body: Body) -> None:
        names = [v["name"] for v in body["dag"]["vertices"]]
        frm = sender % len(names)
        to = receiver % (frm + 1)
        body["dag"]["edges"].append({"from": names[frm], "to": names[to]})

    return mutate


EXPRESSION_PARAMS = {
    "map": "select",
    "filter": "where",
    "flat_map": "explode",
    "sort": "by",
    "aggregate": "key",
    "insert_watermarks": "timestamp",
    "window": "timestamp",
}
BAD_EXPRESSIONS = ["x +", "(x", "no_such_function(x)", "reflect('java.lang.System', 'exit', 0)"]


def _bad_expression(at: int, text: str) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        vertices = [v for v in body["dag"]["vertices"] if v["processor"] in EXPRESSION_PARAMS]
        if not vertices:
            return
        vertex = vertices[at % len(vertices)]
        param = EXPRESSION_PARAMS[vertex["processor"]]
        vertex["params"][param] = {"x": text} if param == "select" else text

    return mutate


def _unknown_field(where: str) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        places = {
            "body": body,
            "dag": body["dag"],
            "config": body.setdefault("config", {}),
            "vertex": body["dag"]["vertices"][-1],
            "edge": body["dag"]["edges"][0],
        }
        places[where]["surprise"] = 1

    return mutate


def _duplicate_name(at: int) -> Callable[[Body], None]:
    def mutate(body: Body) -> None:
        vertices = body["dag"]["vertices"]
        vertices[at % len(vertices)]["name"] = vertices[0]["name"]

    return mutate


at = st.integers(min_value=0, max_value=15)
breakages: st.SearchStrategy[Breakage] = st.one_of(
    st.sampled_from([(n, m) for n, m in MUTATIONS.items() if n != "as it is"]),
    st.sampled_from([(n, _if_window(m)) for n, m in WINDOW_MUTATIONS.items()]),
    st.builds(lambda i, j: (f"drop param {j} of vertex {i}", _drop_param(i, j)), at, at),
    st.builds(lambda i: (f"unknown processor at vertex {i}", _unknown_processor(i)), at),
    st.builds(lambda i: (f"dangling edge {i}", _dangling_edge(i)), at),
    st.builds(lambda i, j: (f"back edge from vertex {i} to {j}", _back_edge(i, j)), at, at),
    st.builds(
        lambda i, t: (f"bad expression {t!r} at {i}", _bad_expression(i, t)),
        at,
        st.sampled_from(BAD_EXPRESSIONS),
    ),
    st.builds(
        lambda w: (f"unknown field in the {w}", _unknown_field(w)),
        st.sampled_from(["body", "dag", "config", "vertex", "edge"]),
    ),
    st.builds(lambda i: (f"vertex {i} named as the first", _duplicate_name(i)), at),
)


@settings(
    max_examples=40,
    deadline=None,
    # ``http`` is one client with the one token: nothing of an example stays in it.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(body=bodies(), broken=st.lists(breakages, max_size=3))
def test_the_three_doors_give_one_answer_for_generated_bodies(
    http: httpx.Client, redis_namespace: str, body: Body, broken: list[Breakage]
) -> None:
    for name, mutate in broken:
        note(name)
        mutate(body)
    verdict, _ = _assert_one_answer(http, redis_namespace, body)
    event(verdict)  # how many of each: ``--hypothesis-show-statistics``


def test_what_was_ignored_or_failed_late_is_refused_naming_it(http: httpx.Client) -> None:
    """The bodies the issue found accepted: each is a 422 whose problems point at the
    param that would have been ignored, or failed at run time."""
    expected = {
        "unicast edge with a key": "/dag/edges/0/key",
        "broadcast edge with a missing python partitioner": "/dag/edges/0/partitioner",
        "all-to-one edge with a key": "/dag/edges/0/key",
        "at_least_once": "/config/processing_guarantee",
        "snapshot interval": "/config/snapshot_interval_ms",
        "backup count": "/config/backup_count",
        "epoch interval": "/config/epoch_interval_ms",
        "notify without a webhook secret": "/config/notify",
        "an empty source.items": "/dag/vertices/0/params/items",
    }
    for name, pointer in expected.items():
        body = _example("word-count")
        MUTATIONS[name](body)
        response = http.post("/v1/jobs", json=body)
        assert response.status_code == 422, name
        assert [e["pointer"] for e in response.json()["errors"]] == [pointer], name
    windows = {
        "tumbling without size": ["size_ms"],
        "tumbling with a slide": ["slide_ms"],
        "session with a size": ["size_ms"],
        "session without a gap": ["gap_ms"],
    }
    for name, fields in windows.items():
        body = _example("stream-windows")
        WINDOW_MUTATIONS[name](body)
        at = next(i for i, v in enumerate(body["dag"]["vertices"]) if v["processor"] == "window")
        response = http.post("/v1/dags:validate", json=body)
        assert response.status_code == 422, name
        pointers = [e["pointer"] for e in response.json()["errors"]]
        assert pointers == [f"/dag/vertices/{at}/params/{f}" for f in fields], name


@pytest.mark.parametrize("routing", ["unicast", "broadcast", "all_to_one"])
def test_a_partitioner_on_an_edge_without_a_key_is_refused_but_the_default_clients_write(
    http: httpx.Client, redis_namespace: str, routing: str
) -> None:
    """Issue 25: a partitioner on an edge that routes by no key would be ignored, so it is
    refused naming it, by all three doors alike. The default ``murmur3`` is not: the
    OpenAPI-generated client writes it on every edge, and it asks for nothing."""
    last = len(_example("word-count")["dag"]["edges"]) - 1
    pointer = f"/dag/edges/{last}/partitioner"
    body = _example("word-count")
    body["dag"]["edges"][last].update(routing=routing, partitioner="spark_hash")
    for path in ("/v1/dags:validate", "/v1/jobs"):
        response = http.post(path, json=body)
        assert response.status_code == 422, path
        problem = response.json()
        assert problem["type"].endswith("/invalid-dag")
        assert [e["pointer"] for e in problem["errors"]] == [pointer], path
        assert "leave partitioner out" in problem["errors"][0]["message"]
    assert _offline(body, redis_namespace)[1] == [(pointer, problem["errors"][0]["message"])]
    body["dag"]["edges"][last]["partitioner"] = "murmur3"
    assert http.post("/v1/dags:validate", json=body).status_code == 200


def _with_filter(body: Body, where: str) -> Body:
    """``body`` (the word count) with a ``filter`` between ``tokenize`` and ``accumulate``."""
    body["dag"]["vertices"].insert(
        2, {"name": "f", "processor": "filter", "params": {"where": where}}
    )
    edge = next(e for e in body["dag"]["edges"] if e["from"] == "tokenize")
    edge["from"] = "f"
    body["dag"]["edges"].append({"from": "tokenize", "to": "f"})
    return body


@pytest.mark.parametrize(
    ("change", "pointer", "message"),
    [
        (lambda b: b["dag"]["edges"][2].update(key="word"), "/dag/edges/2/key",
         "the key 'word' reads word, which 'accumulate' does not emit (it emits: count, key)"),
        (lambda b: _with_filter(b, "length(word) > 0 AND wrd != ''"),
         "/dag/vertices/2/params/where",
         "reads wrd, which its input does not have (it has: line, word)"),
        (lambda b: b["dag"]["vertices"][3]["params"]["aggregations"].update(count="sum(n)"),
         "/dag/vertices/3/params/aggregations/count", "reads n, which its input does not have"),
    ],
)  # fmt: skip
def test_a_field_its_input_lacks_is_refused_at_submission_not_in_spark(
    http: httpx.Client,
    redis_namespace: str,
    change: Callable[[Body], object],
    pointer: str,
    message: str,
) -> None:
    """Issue 25: where the DAG tells a vertex's fields, an expression (or a partitioned edge's
    key) reading one its input lacks is refused by all three doors alike, naming it, instead
    of failing with Spark's UNRESOLVED_COLUMN once the job runs."""
    body = _example("word-count")
    change(body)
    for path in ("/v1/dags:validate", "/v1/jobs"):
        response = http.post(path, json=body)
        assert response.status_code == 422, path
        errors = response.json()["errors"]
        assert [e["pointer"] for e in errors] == [pointer], path
        assert message in errors[0]["message"], errors
    assert _offline(body, redis_namespace)[1] == [(pointer, errors[0]["message"])]


@pytest.mark.parametrize(
    "where",
    [
        "WORD != ''",  # Spark resolves names whatever their case
        "exists(split(line, ' '), x -> x = word)",  # a lambda's variable is not a field
        "length(`word`) > 0",
    ],
)
def test_fields_the_input_has_are_read_freely(http: httpx.Client, where: str) -> None:
    response = http.post("/v1/dags:validate", json=_with_filter(_example("word-count"), where))
    assert response.status_code == 200, response.text


def test_a_field_of_text_files_is_not_refused_it_may_be_a_partition_column(
    tmp_path: Path,
) -> None:
    """Text files under ``key=value`` directories bring those partition columns with their
    lines: a field read after them may be one, until a map names its own output."""
    lines = {"name": "lines", "processor": "source.files",
             "params": {"path": str(tmp_path / "in"), "format": "text"}}  # fmt: skip
    day = {"name": "day", "processor": "filter", "params": {"where": "date = '2026-11-30'"}}
    out = {"name": "out", "processor": "sink.results"}
    body: Body = {
        "name": "by-day",
        "dag": {"vertices": [lines, day, out],
                "edges": [{"from": "lines", "to": "day"}, {"from": "day", "to": "out"}]},
    }  # fmt: skip
    rules = AcceptRules(data=DataSettings(roots=[str(tmp_path)]))
    assert accept(JobSpec.model_validate(body), rules).plan.order == ["lines", "day", "out"]
    upper = {"name": "upper", "processor": "map", "params": {"select": {"u": "upper(line)"}}}
    body["dag"]["vertices"] = [lines, upper, day, out]
    body["dag"]["edges"] = [{"from": "lines", "to": "upper"}, {"from": "upper", "to": "day"},
                            {"from": "day", "to": "out"}]  # fmt: skip
    with pytest.raises(DagValidationError, match="reads date, which its input does not have"):
        accept(JobSpec.model_validate(body), rules)
