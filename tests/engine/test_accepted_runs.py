"""A property: whatever the accept path takes, the engine runs.

Hypothesis builds DAG bodies (``tests.dag_strategies.bodies``: chains of built-ins over one
integer field, every routing, keys and partitioners present or not, windows with any of
their params, batch and stream config): a body ``accept`` refuses is fine; a body it takes
must run to its end. No body here can fail for a reason of its data, so any failure is one
submission could have told.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from jetspark.dag.errors import DagValidationError
from jetspark.dag.model import JobSpec
from jetspark.jobs.accept import AcceptRules, accept
from tests.dag_strategies import bodies
from tests.engine.conftest import RunDag

pytestmark = pytest.mark.spark


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=bodies())
def test_whatever_is_accepted_runs(run_dag: RunDag, body: dict[str, Any]) -> None:
    try:
        accept(JobSpec.model_validate(body), AcceptRules())
    except DagValidationError:
        return  # refused at submission, with a 422 naming why
    outcome, plan = run_dag(body)
    assert outcome.sinks == ["out"]
    assert plan.runs_in_epochs == any(v["processor"] == "window" for v in body["dag"]["vertices"])
