"""``main(dag)``: what an example script does when run: print, run here, or submit."""

from __future__ import annotations

import argparse
import json
import os
import sys

from jetspark.sdk.dag import DAG


def main(dag: DAG, argv: list[str] | None = None) -> None:
    """No option: print the ``POST /v1/jobs`` body. ``--local``: run the DAG here and print
    its records as JSON lines. ``--submit``: submit it to ``--url`` (``JETSPARK_URL``), follow
    it, print its records."""
    parser = argparse.ArgumentParser(description=f"the {dag.name!r} DAG")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--local", action="store_true", help="run here on a local SparkSession")
    mode.add_argument("--submit", action="store_true", help="submit to the API and wait")
    parser.add_argument("--url", default=os.environ.get("JETSPARK_URL", "http://127.0.0.1:8000"))
    args = parser.parse_args(argv)
    if args.local:
        from worker.local_run import run_local

        records = run_local(dag).items()
    elif args.submit:
        from jetspark.sdk.client import Client

        with Client(args.url) as client:
            records = client.run(dag).to_list()
    else:
        sys.stdout.write(dag.to_json_text())
        return
    for record in records:
        print(json.dumps(record))
