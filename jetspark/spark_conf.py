"""Spark properties from the environment: ``JETSPARK_SPARK_CONF`` and ``JETSPARK_SPARK_CONF_FILE``.

The file is read first (``spark-defaults.conf`` syntax), the JSON object second, so the JSON
wins on a key both name. Every problem is a ``SparkConfError`` with one line that names the
variable, so a worker that cannot start says why instead of dying in a loop.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import structlog

from jetspark.json_setting import json_object
from jetspark.settings import JdbcSettings, SparkSettings
from jetspark.spark_pools import ALLOCATION_FILE

log = structlog.get_logger("jetspark.worker")

OWNED = {
    "spark.master": "JETSPARK_SPARK_MASTER",
    "spark.app.name": "JETSPARK_SPARK_APP_NAME",
}
"""Properties jetspark sets from a setting of its own: named in the conf, they are refused."""

REQUIRED = {
    # ${env:...} / ${system:...} in a user expression would read the worker's secrets.
    "spark.sql.variable.substitute": "false",
    # A routed frame is hash-partitioned on the processor slot alone; joins on (slot, key)
    # must not reshuffle it (processor g joins what it received).
    "spark.sql.requireAllClusterKeysForCoPartition": "false",
    # Windows and timestamps in results are UTC whatever the machine's zone.
    "spark.sql.session.timeZone": "UTC",
}
"""Properties the engine's correctness or security depends on: another value is refused."""

EXIT_CONFIG = 78
"""A worker's exit code for a setting it cannot use (sysexits' EX_CONFIG): ``jetspark up``
stops instead of restarting it."""

_LINE = re.compile(r"^(\S+?)(?:\s*=\s*|\s+)(.*)$")


class SparkConfError(ValueError):
    """A Spark setting jetspark cannot use; the message is one line."""


def parse_properties(text: str, source: str) -> dict[str, str]:
    """``key value`` or ``key=value`` lines; blank lines and ``#`` comments are skipped."""
    conf: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        match = _LINE.match(line)
        if match is None:
            raise SparkConfError(f"{source} line {number}: expected `key value`, got {line!r}")
        conf[match.group(1)] = match.group(2).strip()
    return conf


def parse_json_conf(text: str, source: str) -> dict[str, str]:
    """A JSON object of properties; values are strings, numbers or booleans."""
    value = json_object(text, source, "Spark properties", SparkConfError)
    conf: dict[str, str] = {}
    for key, item in value.items():
        if isinstance(item, bool):
            conf[key] = "true" if item else "false"
        elif isinstance(item, str | int | float):
            conf[key] = str(item)
        else:
            raise SparkConfError(
                f"{source}: {key!r} must be a string, number or boolean, not {type(item).__name__}"
            )
    return conf


def check_conf(conf: Mapping[str, str], source: str) -> None:
    """Refuse what is not a Spark property, what jetspark owns, and what it depends on."""
    for key, value in conf.items():
        if not key.startswith("spark."):
            raise SparkConfError(f"{source}: {key!r} is not a Spark property (spark.*)")
        if key in OWNED:
            raise SparkConfError(f"{source}: set {key} with {OWNED[key]}, not here")
        required = REQUIRED.get(key)
        if required is not None and value.strip().lower() != required.lower():
            raise SparkConfError(
                f"{source}: {key} must stay {required!r} (jetspark depends on it), not {value!r}"
            )


def user_conf(settings: SparkSettings | None = None) -> dict[str, str]:
    """The properties the environment gives: the file's, then the JSON object's."""
    settings = settings or SparkSettings()
    conf: dict[str, str] = {}
    if settings.conf_file is not None:
        source = f"JETSPARK_SPARK_CONF_FILE ({settings.conf_file})"
        try:
            text = Path(settings.conf_file).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise SparkConfError(f"{source} cannot be read: {error}") from None
        from_file = parse_properties(text, source)
        check_conf(from_file, source)
        conf |= from_file
    if settings.conf is not None and settings.conf.strip():
        from_json = parse_json_conf(settings.conf, "JETSPARK_SPARK_CONF")
        check_conf(from_json, "JETSPARK_SPARK_CONF")
        conf |= from_json
    return conf


def is_local(master: str) -> bool:
    """``local``, ``local[N]``, ``local[*]``, ``local[N,F]``: Spark inside the worker's JVM."""
    return master == "local" or master.startswith("local[")


def session_conf(
    *,
    master: str,
    shuffle_partitions: int,
    conf: Mapping[str, str] | None = None,
    driver_jars: list[str] | None = None,
    ui_port: int | None = None,
) -> dict[str, str]:
    """Every property a worker's session is built with: defaults, the user's, then REQUIRED.

    Loopback is only the default of a local master: a cluster's executors must reach the
    driver, so there Spark picks the address unless ``spark.driver.host`` is given. Spark's
    UI is off unless ``ui_port`` (``JETSPARK_SPARK_UI_PORT``) names its port; then it runs
    there, without its kill links (anyone reaching it could otherwise stop any tenant's job).
    """
    ui = (
        {"spark.ui.enabled": "true", "spark.ui.port": str(ui_port), "spark.ui.killEnabled": "false"}
        if ui_port is not None
        else {"spark.ui.enabled": "false"}
    )
    defaults = {
        **ui,
        "spark.scheduler.mode": "FAIR",
        "spark.scheduler.allocation.file": str(ALLOCATION_FILE),
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # PySpark's DataFrame call sites (for error context) cost ~7 py4j round trips per
        # Column function, a third of a job's plan-building calls, and would only name
        # jetspark's own lines: users write DAGs, not PySpark.
        "spark.python.sql.dataFrameDebugging.enabled": "false",
    }
    if is_local(master):
        defaults |= {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    jars = JdbcSettings().driver_jars if driver_jars is None else driver_jars
    return with_driver_jars(defaults | dict(conf or {}), jars) | REQUIRED


def with_driver_jars(properties: Mapping[str, str], jars: list[str]) -> dict[str, str]:
    """``properties`` with the JDBC driver jars that exist added to ``spark.jars`` (the
    executors get them) and to the driver's class path (where Spark's JDBC source looks a
    driver up on the driver); the user's own entries are kept first."""
    merged = dict(properties)
    present = [jar for jar in jars if Path(jar).is_file()]
    for jar in jars:
        if jar not in present:
            log.warning(
                "JDBC driver jar not found: source.jdbc/sink.jdbc jobs of its database fail "
                "naming the missing driver (`make jdbc-driver` installs PostgreSQL's)",
                jar=jar,
            )
    for key, separator in (("spark.jars", ","), ("spark.driver.extraClassPath", os.pathsep)):
        listed = [entry for entry in merged.get(key, "").split(separator) if entry]
        listed += [jar for jar in present if jar not in listed]
        if listed:
            merged[key] = separator.join(listed)
    return merged
