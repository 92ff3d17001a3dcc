"""Hostile expressions (issue 11): refused at validation and again by the engine, which runs
only the Spark tree it checked; sizes bounded; no ``${...}`` substitution."""

from __future__ import annotations

import os
from typing import Any

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from sqlglot import exp

from jetspark.dag.errors import DagValidationError
from jetspark.dag.expressions import ExpressionError, check_expression
from jetspark.dag.model import JobSpec
from jetspark.dag.validate import validate_job
from tests.engine.conftest import RunDag, job_body
from worker.engine.errors import EngineError
from worker.engine.expressions import user_column
from worker.engine.runner import VertexFailed

REFLECT = "reflect('java.lang.System', 'getProperty', 'user.home')"


def _pipeline(select: dict[str, str], items: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return job_body(
        [
            {"name": "src", "processor": "source.items",
             "params": {"items": items or [{"v": 1, "s": "ab", "n": 3}]}},
            {"name": "m", "processor": "map", "params": {"select": select}},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "src", "to": "m"}, {"from": "m", "to": "out"}],
    )  # fmt: skip


def _aggregate(expression: str, stage: str = "accumulate") -> dict[str, Any]:
    return job_body(
        [
            {"name": "src", "processor": "source.items", "params": {"items": [{"v": 1}]}},
            {"name": "agg", "processor": "aggregate",
             "params": {"stage": stage, "aggregations": {"a": expression}}},
            {"name": "out", "processor": "sink.results"},
        ],
        [{"from": "src", "to": "agg"}, {"from": "agg", "to": "out"}],
    )  # fmt: skip


def _problems(body: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(DagValidationError) as refused:
        validate_job(JobSpec.model_validate(body))
    return [(p.pointer, p.message) for p in refused.value.problems]


ATTACKS = {
    "reflect": REFLECT,
    "java_method": "java_method('java.lang.System', 'getenv', 'HOME')",
    "comment smuggling": f"avg(v /* ) + {REFLECT} + ( */)",
    "line comment": "avg(v) -- + 1",
    "env substitution": "'${env:HOME}'",
    "system substitution": "'${system:user.home}'",
    "lambda body": f"transform(array(1), x -> {REFLECT})",
    "java_method in a filter lambda": "size(filter(array('a'), x -> "
    "java_method('java.lang.System', 'getenv', x) IS NOT NULL))",
    "reflect in a nested lambda": f"aggregate(array(1), 0, (acc, x) -> "
    f"acc + size(transform(array(x), y -> length({REFLECT}))))",
    "huge repeat": "repeat(s, 1500000000)",
    "huge sequence": "sequence(1, 2000000000)",
    "subquery": "(select 1)",
}


@pytest.mark.parametrize("expression", ATTACKS.values(), ids=ATTACKS.keys())
def test_validation_refuses_each_attack_naming_its_pointer(expression: str) -> None:
    problems = _problems(_aggregate(expression))
    assert problems and problems[0][0] == "/dag/vertices/1/params/aggregations/a"


@pytest.mark.parametrize("name", ["a`b", "a b", "1a", "a.b", "a)", ""])
def test_user_field_names_must_be_identifiers(name: str) -> None:
    problems = _problems(_pipeline({name: "v"}))
    assert problems and problems[0][0].startswith("/dag/vertices/1/params/select")


@pytest.mark.spark
@pytest.mark.parametrize("expression", ATTACKS.values(), ids=ATTACKS.keys())
def test_the_engine_refuses_each_attack_on_the_tree_spark_parsed(
    spark: SparkSession, expression: str
) -> None:
    frame = spark.createDataFrame([{"v": 1, "s": "ab"}])
    try:
        column = user_column(expression, aggregates=True)
    except EngineError:
        return  # refused before anything ran
    # Only a size-taking call passes the check; its guard fails the job when it runs.
    with pytest.raises(Exception, match="would make more than"):
        frame.select(column).collect()


@pytest.mark.spark
def test_checked_trees_are_kept_and_refusals_are_not(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine keeps what it checked, per text and size limit, and never keeps a refusal."""
    assert user_column("v * 2 + 1") is user_column("v * 2 + 1")
    frames = spark.createDataFrame([{"v": 1}]), spark.createDataFrame([{"v": 20}])
    assert [f.select(user_column("v * 2 + 1")).collect()[0][0] for f in frames] == [3, 41]
    for _ in range(2):
        with pytest.raises(EngineError, match="reflect"):
            user_column(REFLECT)
    kept = user_column("repeat(s, 3)")
    monkeypatch.setenv("JETSPARK_EXPRESSION_MAX_SIZE", "2")
    smaller = user_column("repeat(s, 3)")
    assert smaller is not kept
    with pytest.raises(Exception, match="would make more than 2"):
        spark.createDataFrame([{"s": "ab"}]).select(smaller).collect()


@pytest.mark.spark
def test_variable_substitution_is_off(spark: SparkSession) -> None:
    assert spark.conf.get("spark.sql.variable.substitute") == "false"
    home = os.environ.get("HOME", "/root")
    rows = spark.range(1).selectExpr("'${env:HOME}' AS v").collect()
    assert rows[0]["v"] == "${env:HOME}" != home


@pytest.mark.spark
def test_a_size_computed_at_run_time_fails_the_job_clearly(run_dag: RunDag) -> None:
    body = _pipeline({"r": "repeat(s, n)"}, items=[{"s": "ab", "n": 1_500_000_000}])
    with pytest.raises(VertexFailed, match=r"repeat\(\) would make more than"):
        run_dag(body)
    grown = _pipeline({"r": "repeat(repeat(s, n), n)"}, items=[{"s": "ab", "n": 1000}])
    with pytest.raises(VertexFailed, match=r"repeat\(\) would make more than"):
        run_dag(grown)
    fine = _pipeline({"r": "repeat(s, n)", "q": "size(sequence(1, n))"})
    outcome, _ = run_dag(fine)
    assert outcome.results["out"] == [{"r": "ababab", "q": 3}]


@pytest.mark.spark
def test_backticks_name_a_column_and_never_break_out(run_dag: RunDag) -> None:
    body = _pipeline({"x": "`a``b`", "y": "'`) , reflect(1'"}, items=[{"a`b": 5}])
    outcome, _ = run_dag(body)
    assert outcome.results["out"] == [{"x": 5, "y": "`) , reflect(1"}]


@pytest.mark.spark
def test_higher_order_functions_run_with_checked_lambdas(run_dag: RunDag) -> None:
    outcome, _ = run_dag(_pipeline({"t": "transform(array(1, 2), x -> x + v)"}))
    assert outcome.results["out"] == [{"t": [2, 3]}]
    lambdas = {
        "kept": "filter(xs, x -> x % 2 = 1)",
        "indexed": "transform(xs, (x, i) -> x * 10 + i)",
        "any": "exists(xs, x -> x > n)",
        "all": "forall(xs, x -> x > 0)",
        "total": "aggregate(xs, 0L, (acc, x) -> acc + x, acc -> acc * 2)",
        "nested": "transform(filter(xs, x -> x > 1), x -> size(filter(xs, y -> y < x)))",
        "pairs": "zip_with(xs, reverse(xs), (a, b) -> a - b)",
    }
    body = _pipeline(lambdas, [{"v": 1, "n": 3}])
    body["dag"]["vertices"].insert(
        1, {"name": "arr", "processor": "map",
            "params": {"select": {"xs": "sequence(1, 4)", "n": "n"}}}
    )  # fmt: skip
    body["dag"]["edges"] = [
        {"from": "src", "to": "arr"}, {"from": "arr", "to": "m"}, {"from": "m", "to": "out"},
    ]  # fmt: skip
    outcome, _ = run_dag(body)
    assert outcome.results["out"] == [
        {"kept": [1, 3], "indexed": [10, 21, 32, 43], "any": True, "all": True, "total": 20,
         "nested": [1, 2, 3], "pairs": [-3, -1, 1, 3]}
    ]  # fmt: skip


@pytest.mark.spark
def test_a_lambda_calling_java_method_is_refused_on_submission_and_by_the_engine(
    run_dag: RunDag,
) -> None:
    expression = "filter(array(s), x -> java_method('java.lang.System', 'getenv', x) = 'y')"
    problems = _problems(_pipeline({"f": expression}))
    assert problems[0][0] == "/dag/vertices/1/params/select/f"
    assert "java_method() is not allowed" in problems[0][1]
    with pytest.raises(EngineError, match=r"java_method\(\) is not allowed"):
        user_column(expression)


@pytest.mark.spark
def test_staged_averages_are_built_from_the_checked_argument(run_dag: RunDag) -> None:
    outcome, _ = run_dag(_aggregate("avg(v * 2)"))
    assert outcome.results["out"] == [{"a": {"sum": 2, "count": 1}}]


# -- property: what Spark runs is what was checked --------------------------------------------

_LEAVES = st.sampled_from(["v", "s", "1", "'x'", "`v`", "'a''b'", "'--'", "'/*'", "`re``flect`"])
_SAFE = ["upper", "lower", "length", "concat", "coalesce", "abs", "reverse"]
_INJECTIONS = [
    "/* */", "-- ", "'", "`", "${env:HOME}", "reflect('java.lang.System','getenv','HOME')",
    "java_method('java.lang.System','getenv','HOME')", ")", "*/",
]  # fmt: skip


def _calls(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda f, args: f"{f}({', '.join(args)})",
        st.sampled_from(_SAFE),
        st.lists(children, min_size=1, max_size=2),
    )


_EXPRESSIONS = st.recursive(_LEAVES, _calls, max_leaves=6)


@st.composite
def _injected(draw: st.DrawFn) -> str:
    text = draw(_EXPRESSIONS)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(_INJECTIONS)) + text[at:]
    return text


def _spark_function_names(spark: SparkSession, text: str) -> set[str]:
    names: set[str] = set()
    tree = spark._jsparkSession.sessionState().sqlParser().parseExpression(text)
    stack = [tree]
    while stack:
        node = stack.pop()
        if str(node.nodeName()) == "UnresolvedFunction":
            names.add(str(node.nameParts().apply(0)).lower())
        children = node.children()
        stack.extend(children.apply(i) for i in range(children.size()))
    return names


@pytest.mark.spark
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_injected())
def test_what_spark_runs_is_exactly_what_was_checked(spark: SparkSession, text: str) -> None:
    try:
        check_expression(text, max_size=1_000_000)
        api_ok = True
    except ExpressionError:
        api_ok = False
    try:
        user_column(text)
        engine_ok = True
    except EngineError:
        engine_ok = False
    # Validation guards every job before the engine sees it: the engine never refuses what it
    # accepted (it may accept more, e.g. a wrong arity Spark's analyser reports later).
    assert engine_ok or not api_ok, f"validation accepted what the engine refuses: {text!r}"
    if engine_ok:
        # Spark's own tree calls only allow-listed functions, and when validation accepted
        # too, only functions it checked (sqlglot may see more: it reads 'a''b' as a concat).
        executed = _spark_function_names(spark, text)
        assert executed <= set(_SAFE)
        if api_ok:
            assert executed <= _sqlglot_function_names(text)


def _sqlglot_function_names(text: str) -> set[str]:
    names = set()
    for node in sqlglot.parse_one(text, read="spark").walk():
        if isinstance(node, exp.Func) and not isinstance(node, exp.Binary | exp.Unary):
            names.add(node.sql(dialect="spark").split("(", 1)[0].strip().lower())
    return names
