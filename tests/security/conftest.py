"""The engine fixtures, for the attacks that run on real Spark."""

from tests.engine.conftest import run_dag  # noqa: F401 - a fixture, used by name
