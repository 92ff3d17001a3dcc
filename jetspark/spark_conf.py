"""Spark properties from the environment: ``JETSPARK_SPARK_CONF`` and ``JETSPARK_SPARK_CONF_FILE``.

The file is read first (``spark-defaults.conf`` syntax), the JSON object second, so the JSON
wins on a key both name. Every problem is a ``SparkConfError`` with one line that names the
variable, so a worker that cannot start says why instead of dying in a loop.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from jetspark.settings import SparkSettings

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
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise SparkConfError(f"{source} is not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise SparkConfError(f"{source} must be a JSON object of Spark properties")
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
    *, master: str, shuffle_partitions: int, conf: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Every property a worker's session is built with: defaults, the user's, then REQUIRED.

    Loopback is only the default of a local master: a cluster's executors must reach the
    driver, so there Spark picks the address unless ``spark.driver.host`` is given.
    """
    defaults = {
        "spark.ui.enabled": "false",
        "spark.scheduler.mode": "FAIR",
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # PySpark's DataFrame call sites (for error context) cost ~7 py4j round trips per
        # Column function, a third of a job's plan-building calls, and would only name
        # jetspark's own lines: users write DAGs, not PySpark.
        "spark.python.sql.dataFrameDebugging.enabled": "false",
    }
    if is_local(master):
        defaults |= {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    return defaults | dict(conf or {}) | REQUIRED
