"""Build the warm SparkSession a worker keeps for its whole life."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def build_spark_session(
    *,
    master: str,
    app_name: str = "jetspark-worker",
    warehouse: Path | None = None,
    shuffle_partitions: int = 8,
) -> SparkSession:
    """A SparkSession on loopback with the FAIR scheduler, Python workers on this interpreter."""
    from pyspark.sql import SparkSession

    # Spark's Python workers must run this interpreter, or they miss our modules.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.scheduler.mode", "FAIR")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        # A routed frame is hash-partitioned on the processor slot alone; joins on
        # (slot, key) must not reshuffle it (processor g joins what it received).
        .config("spark.sql.requireAllClusterKeysForCoPartition", "false")
        # ${env:...} / ${system:...} in a user expression would read the worker's secrets.
        .config("spark.sql.variable.substitute", "false")
    )
    if warehouse is not None:
        builder = builder.config("spark.sql.warehouse.dir", str(warehouse))
    return builder.getOrCreate()
