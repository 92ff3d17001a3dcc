"""Spark properties from JETSPARK_SPARK_CONF / JETSPARK_SPARK_CONF_FILE, and what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from pyspark.sql import SparkSession

from jetspark.settings import SparkSettings
from jetspark.spark_conf import (
    REQUIRED,
    SparkConfError,
    parse_json_conf,
    parse_properties,
    session_conf,
    user_conf,
)


def test_a_properties_file_and_the_json_object_merge_the_json_winning(tmp_path: Path) -> None:
    conf_file = tmp_path / "spark-defaults.conf"
    conf_file.write_text(
        "# executors\n"
        "spark.executor.memory   2g\n"
        "spark.executor.cores=2\n"
        "\n"
        "spark.eventLog.enabled true\n"
        "spark.driver.extraJavaOptions -Dfoo=bar -Dx=y\n"
    )
    settings = SparkSettings(
        conf_file=conf_file,
        conf='{"spark.executor.cores": 4, "spark.dynamicAllocation.enabled": true}',
    )
    assert user_conf(settings) == {
        "spark.executor.memory": "2g",
        "spark.executor.cores": "4",
        "spark.eventLog.enabled": "true",
        "spark.driver.extraJavaOptions": "-Dfoo=bar -Dx=y",
        "spark.dynamicAllocation.enabled": "true",
    }


def test_the_environment_reaches_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf_file = tmp_path / "spark.conf"
    conf_file.write_text("spark.executor.memory 1g\n")
    monkeypatch.setenv("JETSPARK_SPARK_CONF_FILE", str(conf_file))
    monkeypatch.setenv("JETSPARK_SPARK_CONF", '{"spark.driver.host": "10.0.0.5"}')
    assert user_conf() == {"spark.executor.memory": "1g", "spark.driver.host": "10.0.0.5"}


@pytest.mark.parametrize(
    ("conf", "message"),
    [
        ("{not json", "JETSPARK_SPARK_CONF is not valid JSON"),
        ('["spark.a"]', "must be a JSON object"),
        ('{"spark.executor.memory": null}', "must be a string, number or boolean"),
        ('{"spark.jars.packages": ["a"]}', "must be a string, number or boolean"),
        ('{"executor.memory": "1g"}', "'executor.memory' is not a Spark property"),
        ('{"spark.master": "local[1]"}', "set spark.master with JETSPARK_SPARK_MASTER"),
        ('{"spark.app.name": "x"}', "with JETSPARK_SPARK_APP_NAME"),
        ('{"spark.sql.variable.substitute": "true"}', "must stay 'false'"),
        ('{"spark.sql.session.timeZone": "Europe/Paris"}', "must stay 'UTC'"),
    ],
)
def test_a_bad_json_conf_is_one_line_naming_the_variable(conf: str, message: str) -> None:
    with pytest.raises(SparkConfError) as raised:
        user_conf(SparkSettings(conf=conf))
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_bad_file_names_the_file_and_the_line(tmp_path: Path) -> None:
    conf_file = tmp_path / "bad.conf"
    conf_file.write_text("spark.executor.memory 1g\nlonely\n")
    with pytest.raises(SparkConfError, match=r"bad.conf\) line 2: expected `key value`"):
        user_conf(SparkSettings(conf_file=conf_file))
    with pytest.raises(SparkConfError, match="cannot be read"):
        user_conf(SparkSettings(conf_file=tmp_path / "missing.conf"))


def test_required_values_may_be_repeated_in_any_case() -> None:
    conf = parse_json_conf('{"spark.sql.variable.substitute": false}', "x")
    assert user_conf(SparkSettings(conf='{"spark.sql.variable.substitute": "FALSE"}')) == {
        "spark.sql.variable.substitute": "FALSE"
    }
    assert conf == {"spark.sql.variable.substitute": "false"}
    assert parse_properties("spark.a  =  b c\n", "f") == {"spark.a": "b c"}


def test_loopback_is_only_the_default_of_a_local_master() -> None:
    local = session_conf(master="local[2]", shuffle_partitions=8)
    assert local["spark.driver.host"] == local["spark.driver.bindAddress"] == "127.0.0.1"
    cluster = session_conf(master="spark://10.0.0.1:7077", shuffle_partitions=8)
    assert "spark.driver.host" not in cluster
    assert "spark.driver.bindAddress" not in cluster
    given = session_conf(
        master="local[2]", shuffle_partitions=8, conf={"spark.driver.bindAddress": "0.0.0.0"}
    )
    assert given["spark.driver.bindAddress"] == "0.0.0.0"


def test_the_users_conf_overrides_defaults_but_never_what_jetspark_depends_on() -> None:
    conf = session_conf(
        master="spark://h:7077",
        shuffle_partitions=8,
        conf={"spark.sql.shuffle.partitions": "64", "spark.scheduler.mode": "FIFO"},
    )
    assert conf["spark.sql.shuffle.partitions"] == "64"
    assert conf["spark.scheduler.mode"] == "FIFO"
    assert {key: conf[key] for key in REQUIRED} == REQUIRED


@pytest.mark.spark
def test_pyspark_call_sites_are_off_unless_asked_for(spark: SparkSession) -> None:
    """Each Column function would cost ~7 py4j round trips to record jetspark's own lines."""
    off = session_conf(master="local[2]", shuffle_partitions=8)
    assert off["spark.python.sql.dataFrameDebugging.enabled"] == "false"
    on = session_conf(
        master="local[2]",
        shuffle_partitions=8,
        conf={"spark.python.sql.dataFrameDebugging.enabled": "true"},
    )
    assert on["spark.python.sql.dataFrameDebugging.enabled"] == "true"
    assert spark.conf.get("spark.python.sql.dataFrameDebugging.enabled") == "false"


def test_sparks_ui_is_off_unless_an_operator_names_its_port_and_never_kills() -> None:
    off = session_conf(master="local[2]", shuffle_partitions=8)
    assert off["spark.ui.enabled"] == "false" and "spark.ui.port" not in off
    on = session_conf(master="local[2]", shuffle_partitions=8, ui_port=4045)
    assert on["spark.ui.enabled"] == "true" and on["spark.ui.port"] == "4045"
    assert on["spark.ui.killEnabled"] == "false"
    assert SparkSettings(ui_port=None).ui_port is None
    with pytest.raises(ValidationError):
        SparkSettings(ui_port=70000)
