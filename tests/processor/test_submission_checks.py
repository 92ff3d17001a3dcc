"""What validation can tell about a python vertex's class before any Spark job runs."""

from __future__ import annotations

import pytest

from jetspark.dag.errors import DagValidationError
from jetspark.dag.model import JobSpec
from jetspark.dag.validate import validate_job
from jetspark.settings import DagLimits


def python_job(cls: str) -> JobSpec:
    return JobSpec.model_validate(
        {
            "name": "checks",
            "dag": {"vertices": [{"name": "p", "processor": "python", "params": {"class": cls}}]},
        }
    )


@pytest.mark.parametrize(
    ("cls", "complaint"),
    [
        ("os:system", "module 'os' is not in the allowed Python modules"),
        (
            "jetspark.example_processors.words:Missing",
            "not a jetspark.processor.Processor subclass",
        ),
        (
            "jetspark.example_processors.words:Mapping",
            "not a jetspark.processor.Processor subclass",
        ),
        ("jetspark.processor.processor:Processor", "declares no output_schema"),
    ],
)
def test_a_bad_class_is_refused_naming_the_vertex(cls: str, complaint: str) -> None:
    limits = DagLimits(allowed_python_modules=["jetspark.example_processors", "jetspark.processor"])
    with pytest.raises(DagValidationError) as failure:
        validate_job(python_job(cls), limits)
    (problem,) = failure.value.problems
    assert problem.pointer == "/dag/vertices/0/params/class"
    assert problem.message.startswith("vertex 'p': ") and complaint in problem.message


def test_an_allowed_module_only_on_the_workers_path_is_left_to_run_time() -> None:
    limits = DagLimits(allowed_python_modules=["jetspark.example_processors", "acme_processors"])
    validate_job(python_job("acme_processors.words:Tokenizer"), limits)
    validate_job(python_job("jetspark.example_processors.words:Tokenizer"), limits)
