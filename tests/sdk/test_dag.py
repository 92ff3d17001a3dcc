"""The SDK's builders against the server's own models: no Spark, no servers."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jetspark.dag import kinds as p
from jetspark.dag.model import EdgeConfig, EdgeSpec, JobSpec, VertexSpec
from jetspark.dag.validate import validate_job
from jetspark.sdk import DAG, DagValidationError, Edge

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def issue_word_count() -> DAG:
    """The form the SDK's issue asks for, as written there."""
    dag = DAG("word-count")
    lines = dag.new_vertex("lines", "source.items", items=[{"line": "a b a"}])
    tok = dag.new_vertex("tokenize", "flat_map", explode="split(line, ' ')", **{"as": "word"})
    count = dag.new_vertex("count", "aggregate", key="word", aggregations={"n": "count(*)"})
    out = dag.new_vertex("out", "sink.results")
    dag.edge(Edge.between(lines, tok))
    dag.edge(Edge.between(tok, count).partitioned("word").distributed())
    dag.edge(Edge.between(count, out))
    return dag


def test_the_issue_form_validates_and_emits_the_body_the_server_reads() -> None:
    dag = issue_word_count()
    validated = dag.validate()
    assert validated.order == ("lines", "tokenize", "count", "out")
    body = dag.to_json()
    spec = JobSpec.model_validate(body)
    assert spec == dag.spec
    edge = spec.dag.edges[1]
    assert (edge.routing.value, edge.key, edge.distributed) == ("partitioned", "word", True)
    assert body["dag"]["vertices"][1]["params"] == {"explode": "split(line, ' ')", "as": "word"}
    assert "config" not in body  # defaults are left to the server


# Each field of the server's EdgeSpec, and the builder call that sets it: a field added to the
# model without a builder fails here.
EDGE_BUILDERS: dict[str, tuple[Callable[[Edge], Edge], Any]] = {
    "source": (lambda e: e, "a"),
    "from_ordinal": (lambda e: Edge.from_("a", 1).to("b"), 1),
    "to": (lambda e: e, "b"),
    "to_ordinal": (lambda e: Edge.from_("a").to("b", 2), 2),
    "routing": (lambda e: e.broadcast(), "broadcast"),
    "key": (lambda e: e.partitioned("k"), "k"),
    "partitioner": (lambda e: e.partitioned("k", "spark_hash"), "spark_hash"),
    "distributed": (lambda e: e.distributed(), True),
    "priority": (lambda e: e.priority(-1), -1),
    "buffered": (lambda e: e.buffered(), True),
    "config": (lambda e: e.set_config(queue_size=8), EdgeConfig(queue_size=8)),
}


@pytest.mark.parametrize("field", sorted(EdgeSpec.model_fields))
def test_every_edge_field_has_a_builder(field: str) -> None:
    assert field in EDGE_BUILDERS, f"EdgeSpec.{field} has no Edge builder"
    build, value = EDGE_BUILDERS[field]
    spec = build(Edge.between("a", "b")).spec
    routing = getattr(spec, field)
    assert (routing.value if hasattr(routing, "value") else routing) == value


def test_routing_builders_and_the_local_default() -> None:
    assert Edge.between("a", "b").all_to_one().spec.routing.value == "all_to_one"
    assert Edge.between("a", "b").broadcast().unicast().spec.routing.value == "unicast"
    assert not Edge.between("a", "b").distributed().local().spec.distributed
    assert set(VertexSpec.model_fields) == {"name", "processor", "params", "local_parallelism"}


# One params model per kind, as the typed way of writing a vertex.
TYPED: dict[str, p.Params] = {
    "source.items": p.ItemsSource(items=[{"a": 1}]),
    "source.sequence": p.SequenceSource(count=3),
    "source.files": p.FilesSource(path="in.txt"),
    "source.redis_stream": p.RedisStreamSource(streams=["s"]),
    "source.jdbc": p.JdbcSource(connection="db", table="sales", where="amount > 0"),
    "map": p.MapParams(select={"b": "a + 1"}),
    "filter": p.FilterParams(where="a > 0"),
    "flat_map": p.FlatMapParams(explode="array(a)", as_="x"),
    "aggregate": p.AggregateParams(aggregations={"n": "count(*)"}),
    "insert_watermarks": p.InsertWatermarksParams(timestamp="ts"),
    "window": p.WindowParams(
        timestamp="ts", type="tumbling", size_ms=10, aggregations={"n": "count(*)"}
    ),
    "hash_join": p.HashJoinParams(build_key="a", probe_key="a"),
    "sort": p.SortParams(by="a"),
    "sink.results": p.NoParams(),
    "sink.files": p.FilesSink(path="out"),
    "sink.redis_map": p.RedisMapSink(map="m", key="a"),
    "sink.redis_stream": p.RedisStreamSink(stream="s"),
    "sink.jdbc": p.JdbcSink(connection="db", table="public.totals", mode="overwrite"),
    "source.kafka": p.KafkaSource(cluster="events", topics=["orders"], start="latest"),
    "sink.kafka": p.KafkaSink(cluster="events", topic="totals", key="region"),
    "sink.logger": p.NoParams(),
    "python": p.PythonParams(class_="jetspark.example_processors.words:Tokenizer"),
}


@pytest.mark.parametrize("kind", sorted(p.PROCESSORS))
def test_every_processor_kind_takes_its_own_params_model(kind: str) -> None:
    assert kind in TYPED, f"no typed params for {kind}"
    dag = DAG("typed")
    vertex = dag.new_vertex("v", kind, TYPED[kind])
    model = p.PROCESSORS[kind].params_model
    assert model.model_validate(vertex.params) == TYPED[kind]


def test_a_params_model_of_another_kind_is_refused_at_once() -> None:
    with pytest.raises(TypeError, match="FilterParams are not the params of 'map'"):
        DAG("x").new_vertex("v", "map", p.FilterParams(where="true"))


def test_validate_reports_every_problem_with_its_pointer() -> None:
    dag = DAG("mistakes")
    table = dag.new_vertex("table", "source.items", items=[{"k": 1}])
    stream = dag.new_vertex("stream", "source.items", items=[{"k": 1}])
    join = dag.new_vertex("join", "hash_join", build_key="k", probe_key="k")
    dag.new_vertex("orphan", "map", select={"k": "k"})
    dag.edge(Edge.from_(table).to(join, 0))  # the build side needs the lower priority
    dag.edge(Edge.from_(stream).to(join, 1))
    dag.edge(Edge.between(join, "nowhere").partitioned("k"))
    with pytest.raises(DagValidationError) as caught:
        dag.validate()
    assert [(q.pointer, q.message) for q in caught.value.problems] == [
        ("/dag/edges/2/to", "edge join -> nowhere: unknown vertex 'nowhere'")
    ]
    dag.edges.pop()
    with pytest.raises(DagValidationError) as caught:
        dag.validate()
    assert [(q.pointer, q.message) for q in caught.value.problems] == [
        ("/dag/vertices/3", "vertex 'orphan' (map) has 0 inbound edges; it takes 1"),
        (
            "/dag/vertices/2",
            "vertex 'join': the build edge table -> join (ordinal 0) needs a lower priority "
            "number than the probe edge stream -> join",
        ),
        ("/dag/vertices/3", "vertex 'orphan' has no path from a source"),
    ]
    dag.edges[0].priority(-1)
    dag.get_vertex("orphan").spec = dag.get_vertex("orphan").spec.model_copy(
        update={"processor": "source.items", "params": {"items": [{"a": 1}]}}
    )
    dag.validate()


def test_a_malformed_part_is_a_problem_with_a_pointer_not_a_crash() -> None:
    dag = DAG("bad")
    dag.new_vertex("v", "source.items", items=[{"a": 1}])
    dag.edge(Edge("v"))  # no destination
    with pytest.raises(DagValidationError) as caught:
        dag.to_json()
    assert caught.value.problems[0].pointer == "/dag/edges/0/to"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_every_example_json_round_trips_through_the_sdk(path: Path) -> None:
    body = json.loads(path.read_text())
    again = DAG.from_json(body)
    assert JobSpec.model_validate(again.to_json()) == JobSpec.model_validate(body)
    validate_job(JobSpec.model_validate(body))


def test_the_sdk_imports_without_pyspark() -> None:
    code = (
        "import sys; import jetspark.sdk as s; s.DAG; s.Client; "
        "from worker.local_run import run_local; "
        "assert not [m for m in sys.modules if m.startswith(('pyspark', 'py4j'))], 'pyspark'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
