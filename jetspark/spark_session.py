"""Build the warm SparkSession a worker keeps for its whole life."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from jetspark.settings import SparkSettings
from jetspark.spark_conf import SparkConfError, is_local, session_conf, user_conf

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = structlog.get_logger("jetspark.worker")


def build_spark_session(
    *,
    master: str,
    app_name: str = "jetspark-worker",
    warehouse: Path | None = None,
    shuffle_partitions: int = 8,
    conf: Mapping[str, str] | None = None,
    ui_port: int | None = None,
) -> SparkSession:
    """A SparkSession with the FAIR scheduler and ``conf`` (see ``jetspark.spark_conf``);
    a local master stays on loopback with Python workers on this interpreter."""
    from pyspark.sql import SparkSession

    from jetspark.jvm_lookups import keep_jvm_lookups

    properties = session_conf(
        master=master, shuffle_partitions=shuffle_partitions, conf=conf, ui_port=ui_port
    )
    python = properties.get("spark.pyspark.python")
    if python is not None:
        # PySpark reads the executors' interpreter from the environment only.
        os.environ["PYSPARK_PYTHON"] = python
    # Spark's Python workers must run this interpreter, or they miss our modules.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if is_local(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in properties.items():
        builder = builder.config(key, value)
    if warehouse is not None:
        builder = builder.config("spark.sql.warehouse.dir", str(warehouse))
    keep_jvm_lookups()
    return builder.getOrCreate()


def executor_count(spark: SparkSession) -> int:
    """The executors this session sees now: 1 on a local master (the driver runs tasks)."""
    infos = spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos()
    # The driver is listed too; on a cluster it runs no tasks.
    return max(1, len(infos) - 1)


def start_spark(settings: SparkSettings) -> SparkSession:
    """A worker's session from its settings; a setting Spark refuses is a ``SparkConfError``.
    (The worker then ships its code to a cluster's executors: ``worker.executor_code``.)"""
    conf = user_conf(settings)
    try:
        session = build_spark_session(
            master=settings.master,
            app_name=settings.app_name,
            shuffle_partitions=settings.shuffle_partitions,
            conf=conf,
            ui_port=settings.ui_port,
        )
        # SQL properties are checked when the session state is built, on first use: now.
        session.conf.get("spark.sql.session.timeZone")
    except Exception as error:  # py4j, PySpark and the JVM launcher raise many kinds
        raise SparkConfError(
            f"Spark did not start (JETSPARK_SPARK_MASTER={settings.master}): {_cause(error)}"
        ) from None
    if settings.ui_port is not None:  # an operator's tool: said where it is, once
        log.info("Spark UI on", url=session.sparkContext.uiWebUrl, port=settings.ui_port)
    return session


def _cause(error: BaseException) -> str:
    """The line of a Java or PySpark error that says what is wrong, not where."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    causes = [line.removeprefix("Caused by:").strip() for line in lines if "Caused by:" in line]
    if causes:
        return causes[-1]
    for line in lines:
        if "Exception:" in line or "Error:" in line:
            return line
    if "JAVA_GATEWAY_EXITED" in str(error):
        return "the JVM did not start (its own error is on the lines above)"
    return lines[0] if lines else type(error).__name__
