"""The engine and API fixtures the attacks run against."""

from tests.api.conftest import api_app, api_url, http  # noqa: F401 - fixtures, used by name
from tests.engine.conftest import run_dag  # noqa: F401 - a fixture, used by name
from tests.jdbc.conftest import (  # noqa: F401 - fixtures, used by name
    connections,
    db,
    jdbc_database,
    run_jdbc,
)
