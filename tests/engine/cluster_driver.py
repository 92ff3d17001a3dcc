"""Driver of the standalone-cluster test, run in its own process (one SparkContext each).

``python -m tests.engine.cluster_driver spark://127.0.0.1:PORT`` runs the example word count
through the engine on that master and prints JSON: the results and, for every task of the
job, the partition (processor) and the executor it ran on, read from the driver's REST API.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import httpx

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import build_plan
from jetspark.dag.validate import validate_job
from tests.engine.conftest import run_runnable
from worker.engine import JobControl, RunnableJob

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "word-count.json"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


UI_TIMEOUT_S = 90
"""The driver's REST API answers its first request once it has loaded its classes: 10 s
were too few on a loaded two-core CI machine running this cluster's four JVMs."""


def tasks(ui: str) -> list[dict[str, Any]]:
    """(stage, partition, executor) of every finished task, from the driver's REST API."""
    with httpx.Client(base_url=f"{ui}/api/v1", timeout=UI_TIMEOUT_S) as client:
        (app,) = client.get("/applications").json()
        stages = client.get(f"/applications/{app['id']}/stages").json()
        found = []
        for stage in stages:
            path = f"/applications/{app['id']}/stages/{stage['stageId']}/{stage['attemptId']}"
            for task in client.get(f"{path}/taskList", params={"length": 10_000}).json():
                found.append(
                    {"stage": stage["stageId"], "partition": task["index"],
                     "executor": task["executorId"], "tasks": stage["numTasks"]}
                )  # fmt: skip
        return found


def main(master: str) -> None:
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    port = free_port()
    spark = (
        SparkSession.builder.master(master)
        .appName("jetspark-cluster-test")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "true")
        .config("spark.ui.port", str(port))
        .config("spark.executor.cores", "1")
        .config("spark.executor.memory", "512m")
        .config("spark.cores.max", "2")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.sql.requireAllClusterKeysForCoPartition", "false")
        .getOrCreate()
    )
    try:
        spec = JobSpec.model_validate(json.loads(EXAMPLE.read_text()))
        plan = build_plan(validate_job(spec))
        job = RunnableJob(id=uuid.uuid4(), attempt=1, plan=plan.model_dump(mode="json"))
        control = JobControl(job_group="cluster-test", cancelled=threading.Event())
        outcome = run_runnable(spark, job, control)
        executors = {
            e["id"] for e in httpx.get(
                f"http://127.0.0.1:{port}/api/v1/applications/"
                f"{spark.sparkContext.applicationId}/executors", timeout=UI_TIMEOUT_S,
            ).json() if e["id"] != "driver"
        }  # fmt: skip
        print(
            json.dumps(
                {
                    "results": outcome.results["sink"],
                    "tasks": tasks(f"http://127.0.0.1:{port}"),
                    "executors": sorted(executors),
                }
            )
        )
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
