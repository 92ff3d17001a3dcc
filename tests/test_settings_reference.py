"""The README's settings table and Compose's variables are what the settings classes say."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from jetspark import settings_reference as reference
from jetspark.settings import ApiSettings, WorkerSettings


def test_every_setting_has_a_meaning() -> None:
    assert reference.undocumented() == [], "add a docstring under these fields"


def test_the_readme_table_is_the_one_the_classes_give() -> None:
    text = reference.README.read_text()
    assert text == reference.rendered_readme(text), "run `make docs`"


def test_the_table_names_every_field_with_its_default() -> None:
    rows = {row.variable: row for row in reference.reference()}
    for cls in (WorkerSettings, ApiSettings):
        prefix = str(cls.model_config["env_prefix"])
        for name in cls.model_fields:
            assert f"{prefix}{name}".upper() in rows
    assert rows["JETSPARK_WORKER_HEARTBEAT_S"].default == "`1`"
    assert rows["JETSPARK_API_MAX_BODY_BYTES"].default == "`1048576` (1 MiB)"
    assert rows["JETSPARK_RETENTION_FAILED_S"].default == "`1209600` (14 days)"
    assert rows["JETSPARK_DATABASE_URL"].default == "unset"
    table = reference.readme_table()
    for name in ("JETSPARK_WORKER_POLL_BLOCK_MS", "JETSPARK_API_LONG_POLL_MAX_S"):
        assert f"| `{name}` |" in table


def _environment(service: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = service["environment"]
    return found


def test_compose_passes_every_variable_through_and_the_tokens_to_the_api_alone() -> None:
    text = reference.COMPOSE.read_text()
    assert text == reference.rendered_compose(text), "run `make docs`"
    services = yaml.safe_load(text)["services"]
    variables = {row.variable for row in reference.reference()}
    api = _environment(services["api"])
    assert variables <= set(api), sorted(variables - set(api))
    for name in ("worker", "migrate"):
        env = _environment(services[name])
        assert variables - set(reference.API_SECRETS) <= set(env)
        assert not set(reference.API_SECRETS) & set(env), f"{name} gets the API's tokens"
    # Passed through: no value in the file, so an unset variable stays unset in the container.
    assert api["JETSPARK_WORKER_HEARTBEAT_S"] is None
    assert api["JETSPARK_SPARK_CONF"] is None and api["JETSPARK_WEBHOOK_SECRET"] is None
    assert api["JETSPARK_API_PRINCIPALS"] is None
    assert str(api["JETSPARK_DATABASE_URL"]).endswith("@postgres:5432/jetspark}")


def test_the_spark_ui_link_is_an_http_url_the_page_can_put_in_an_href() -> None:
    url = "https://spark.ops.example/history/{application}"
    assert ApiSettings(spark_ui_url=url).spark_ui_url == url
    for hostile in ("javascript:alert(1)", 'https://x" onmouseover="alert(1)', "data:text/html,x"):
        with pytest.raises(ValidationError):
            ApiSettings(spark_ui_url=hostile)
