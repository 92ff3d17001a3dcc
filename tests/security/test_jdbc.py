"""Hostile DAGs against ``source.jdbc`` / ``sink.jdbc``: a connection the principal may not
use, identifiers and ``where`` text aiming at SQL injection, and credentials looked for
everywhere a user could see them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from api.app import create_app
from jetspark.jdbc.connections import JdbcConfigError, JdbcConnections
from jetspark.settings import ApiSettings, JdbcSettings, TenantSettings
from jetspark.spark_conf import with_driver_jars
from tests.jdbc.conftest import ALICE, BOB, PASSWORD_ENV, Db, RunJdbc, body
from tests.live_server import live_server
from worker.engine.execution import VertexFailed

PASSWORD = f"pw-{uuid.uuid4().hex}"
URL = "jdbc:postgresql://db.internal:5432/sales"


@dataclass(frozen=True)
class Api:
    url: str
    tokens: dict[str, str]

    def client(self, who: str) -> httpx.Client:
        auth = {"Authorization": f"Bearer {self.tokens[who]}"}
        return httpx.Client(base_url=self.url, headers=auth, timeout=30)


@pytest.fixture(scope="module")
def api(database_url: str, redis_url: str, redis_namespace: str) -> Iterator[Api]:
    tokens = {who: f"{who}-{uuid.uuid4().hex}" for who in (ALICE, BOB)}
    entry = {"url": URL, "user": "etl_user", "password_file": "/nonexistent/secret"}
    connections = {
        "main": {**entry, "principals": [ALICE]},
        "theirs": {**entry, "principals": [BOB]},
    }
    app = create_app(
        database_url=database_url,
        redis_url=redis_url,
        redis_namespace=redis_namespace,
        api_settings=ApiSettings(rate_limit_per_s=0),
        tenant_settings=TenantSettings(api_principals=[f"{w}:{t}" for w, t in tokens.items()]),
        jdbc_settings=JdbcSettings(connections=json.dumps(connections)),
    )
    with live_server(app) as url:
        yield Api(url, tokens)


def table_job(
    source: dict[str, Any] | None = None, sink: dict[str, Any] | None = None
) -> dict[str, Any]:
    return body(
        [
            {
                "name": "read",
                "processor": "source.jdbc",
                "params": {"connection": "main", "table": "public.sales", **(source or {})},
            },
            {
                "name": "write",
                "processor": "sink.jdbc",
                "params": {"connection": "main", "table": "totals", **(sink or {})},
            },
        ],
        [{"from": "read", "to": "write"}],
    )


def test_a_connection_the_principal_may_not_use_is_refused_at_submission(api: Api) -> None:
    with api.client(BOB) as bob:
        for path in ("/v1/jobs", "/v1/dags:validate"):
            refused = bob.post(path, json=table_job())
            assert refused.status_code == 422, refused.text
            pointers = [e["pointer"] for e in refused.json()["errors"]]
            assert pointers == [
                "/dag/vertices/0/params/connection",
                "/dag/vertices/1/params/connection",
            ]
            assert "may not use the JDBC connection 'main'" in refused.text
        unknown = bob.post("/v1/jobs", json=table_job({"connection": "elsewhere"}))
        assert unknown.status_code == 422
        assert "unknown JDBC connection 'elsewhere'" in unknown.text
        listed = bob.get("/v1/jobs").json()
        assert listed["items"] == [], "nothing was queued, so nothing is read"


INJECTIONS: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    ("table statement", {"table": "sales; DROP TABLE sales"}, {}, "0/params/table"),
    ("quoted table", {"table": 'sales" OR 1=1 --'}, {}, "0/params/table"),
    ("three parts", {"table": "db.public.sales"}, {}, "0/params/table"),
    ("sink table", {}, {"table": "totals(x) SELECT 1; --"}, "1/params/table"),
    ("column", {"columns": ['id" FROM x; --']}, {}, "0/params/columns/0"),
    (
        "partition column",
        {"partition_column": "id; --", "lower_bound": 0, "upper_bound": 9},
        {},
        "0/params/partition_column",
    ),
    ("where subquery", {"where": "id IN (SELECT id FROM secrets)"}, {}, "0/params/where"),
    ("where comment", {"where": "id > 0 -- AND tenant = 'me'"}, {}, "0/params/where"),
    ("where statement", {"where": "1 = 1; DELETE FROM sales"}, {}, "0/params/where"),
    (
        "where reflection",
        {"where": "reflect('java.lang.Runtime', 'getRuntime') IS NULL"},
        {},
        "0/params/where",
    ),
    ("connection name", {"connection": "main' OR '1"}, {}, "0/params/connection"),
]


@pytest.mark.parametrize(
    ("what", "source", "sink", "pointer"), INJECTIONS, ids=[i[0] for i in INJECTIONS]
)
def test_identifier_and_where_injections_are_refused_naming_the_pointer(
    api: Api, what: str, source: dict[str, Any], sink: dict[str, Any], pointer: str
) -> None:
    with api.client(ALICE) as alice:
        refused = alice.post("/v1/jobs", json=table_job(source, sink))
    assert refused.status_code == 422, (what, refused.text)
    pointers = [e["pointer"] for e in refused.json()["errors"]]
    assert f"/dag/vertices/{pointer}" in pointers, (what, pointers)


def test_no_credential_in_the_job_view_its_dag_or_its_sdk_script(api: Api) -> None:
    with api.client(ALICE) as alice:
        job = alice.post("/v1/jobs", json=table_job({"where": "amount > 0"}))
        assert job.status_code == 201, job.text
        job_id = job.json()["id"]
        seen = [job.text]
        for path in (f"/v1/jobs/{job_id}", f"/v1/jobs/{job_id}/sdk", f"/v1/jobs/{job_id}/dag"):
            answer = alice.get(path)
            assert answer.status_code == 200, (path, answer.text)
            seen.append(answer.text)
        alice.post(f"/v1/jobs/{job_id}:cancel")
    for text in seen:
        assert "etl_user" not in text and "db.internal" not in text and "secret" not in text


def test_the_setting_holds_no_secret_and_says_what_is_wrong_without_echoing_one() -> None:
    bad = {
        "password": {"url": URL, "password": PASSWORD, "principals": ["*"]},
        "user in url": {"url": f"{URL}?user=x&password={PASSWORD}", "principals": ["*"]},
        "userinfo": {"url": f"jdbc:postgresql://x:{PASSWORD}@h/db", "principals": ["*"]},
        "no principals": {"url": URL},
        "not jdbc": {"url": "postgresql://h/db", "principals": ["*"]},
        "unknown key": {"url": URL, "principals": ["*"], "passwd": PASSWORD},
    }
    for what, entry in bad.items():
        with pytest.raises(JdbcConfigError) as refused:
            JdbcConnections.parse(json.dumps({"c": entry}))
        assert PASSWORD not in str(refused.value), what
        assert "JETSPARK_JDBC_CONNECTIONS" in str(refused.value)
    with pytest.raises(JdbcConfigError, match="not valid JSON"):
        JdbcConnections.parse("{")
    good = JdbcConnections.parse(
        json.dumps({"c": {"url": URL, "password_env": PASSWORD_ENV, "principals": ["*"]}})
    )
    assert good.for_principal("c", "anyone").driver_class() == "org.postgresql.Driver"
    assert PASSWORD not in repr(good)


def test_an_api_with_an_unusable_setting_does_not_start(database_url: str, redis_url: str) -> None:
    with pytest.raises(JdbcConfigError, match="give password_env or password_file"):
        create_app(
            database_url=database_url,
            redis_url=redis_url,
            jdbc_settings=JdbcSettings(
                connections=json.dumps({"c": {"url": URL, "password": "x", "principals": []}})
            ),
        )


def test_the_driver_jars_that_exist_join_the_users_class_path(tmp_path: Any) -> None:
    jar = tmp_path / "driver.jar"
    jar.write_bytes(b"")
    conf = with_driver_jars({"spark.jars": "/opt/mine.jar"}, [str(jar), str(tmp_path / "gone.jar")])
    assert conf["spark.jars"] == f"/opt/mine.jar,{jar}"
    assert conf["spark.driver.extraClassPath"] == str(jar)


@pytest.mark.spark
def test_a_failing_job_leaves_no_credential_in_its_error_or_the_logs(
    db: Db, run_jdbc: RunJdbc, capfd: pytest.CaptureFixture[str]
) -> None:
    job = body(
        [
            {
                "name": "read",
                "processor": "source.jdbc",
                "params": {"connection": "main", "table": db.table("absent")},
            },
            {"name": "out", "processor": "sink.logger"},
        ],
        [{"from": "read", "to": "out"}],
    )
    with pytest.raises(VertexFailed) as failed:
        run_jdbc(job)
    out, err = capfd.readouterr()
    assert "absent" in str(failed.value)
    for text in (str(failed.value), repr(failed.value.__cause__), out, err):
        assert db.password not in text
