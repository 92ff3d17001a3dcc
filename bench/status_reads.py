"""Control-plane benchmark: status reads/s with 1 and 2 API processes, against a bare FastAPI
app in the same run; submissions/s, idle memory, start time.

Run: ``make bench`` (``.venv/bin/python -m bench.status_reads [--api-processes 1,2]
[--seconds 10] [--connections 32] [--rate-limit 0]``). For each number of API processes it
starts the API alone (``--stack direct``: uvicorn ``--workers N`` on one port, the servers
named by ``JETSPARK_DATABASE_URL`` / ``JETSPARK_REDIS_URL`` or embedded ones) or
``jetspark up --workers 1 --api-workers N`` (``--stack up``), submits jobs, then loads one
job's view (``GET /v1/jobs/{id}`` with a token, as pollers do) and jetspark's ``/healthz``
with ``wrk`` (``bench.wrk``: only 2xx answers counted; a 429 or a 503 is not a read). The
baseline, loaded the same way just before, is ``/healthz`` of a bare FastAPI app
(``bench.bare_app``) under the same uvicorn in as many processes: its own 2-vs-1 scaling says
what a second process can give on the machine at that moment (on a shared machine, little).

The rate limit is off by default (``--rate-limit 0``): one token loading the server would
measure the limit (with the default 50/s, about 91% of wrk's answers were 429s). Give
``--rate-limit 1000000`` to measure the shared limiter's own cost: it is asked (one Redis
script call) on every request and never refuses. The report names the limit in force.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx

from bench import wrk
from bench.api_overhead import BARE_APP
from bench.processes import exit_on_sigterm, uvicorn_server
from bench.stack import RunningStack, direct_stack, running_stack

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "word-count.json"


def submissions_per_s(stack: RunningStack, count: int = 200) -> tuple[float, str]:
    """Sequential submissions/s of the example word count, and the last job's id."""
    body = json.loads(EXAMPLE.read_text())
    headers = {"Authorization": f"Bearer {stack.token}"}
    job_id = ""
    with httpx.Client(base_url=stack.url, headers=headers, timeout=30) as client:
        started = time.perf_counter()
        for i in range(count):
            body["name"] = f"bench-{i}"
            response = client.post("/v1/jobs", json=body)
            response.raise_for_status()
            job_id = response.json()["id"]
        return count / (time.perf_counter() - started), job_id


def the_stack(kind: str, processes: int, env: dict[str, str]) -> AbstractContextManager[Any]:
    if kind == "up":
        return running_stack(workers=1, api_workers=processes, extra_env=env)
    return direct_stack(api_workers=processes, extra_env=env)


def measure(
    kind: str, processes: int, env: dict[str, str], args: argparse.Namespace
) -> dict[str, Any]:
    """One deployment: its figures, and those of the bare app in as many processes, loaded
    just before its reads (what that many processes can give on this machine now)."""
    with (
        uvicorn_server(BARE_APP, workers=processes) as (bare_url, _, _bare),
        the_stack(kind, processes, env) as stack,
    ):
        time.sleep(3)  # let the stack settle before reading its idle memory
        idle_rss_mib = stack.rss_bytes() / 2**20
        subs, job_id = submissions_per_s(stack)
        load = {"seconds": args.seconds, "connections": args.connections}
        bare = wrk.load(f"{bare_url}/healthz", token=None, **load)
        view = wrk.load(f"{stack.url}/v1/jobs/{job_id}", token=stack.token, **load)
        healthz = wrk.load(f"{stack.url}/healthz", token=None, **load)
    return {
        "api_processes": processes,
        "start_to_ready_s": round(stack.start_s, 2),
        "idle_rss_mib": round(idle_rss_mib, 1),
        "submissions_per_s": round(subs, 1),
        "bare_fastapi_healthz": bare.as_dict(),
        "job_view": view.as_dict(),
        "jetspark_healthz": healthz.as_dict(),
        "job_view_vs_bare": round(view.ok_per_s / bare.ok_per_s, 3),
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.status_reads", description=__doc__)
    parser.add_argument(
        "--stack",
        choices=["direct", "up"],
        default="direct",
        help="the API alone under uvicorn (default), or `jetspark up` with one worker",
    )
    parser.add_argument(
        "--api-processes", default="1,2", help="comma-separated numbers of API processes"
    )
    parser.add_argument("--seconds", type=int, default=10, help="seconds per load run")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument(
        "--rate-limit", type=float, default=0.0, help="requests/s per principal (0: off)"
    )
    return parser.parse_args(argv)


def runs(args: argparse.Namespace) -> Iterator[int]:
    for part in args.api_processes.split(","):
        yield int(part)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    exit_on_sigterm()
    load_before = os.getloadavg()[0]
    env = {"JETSPARK_API_RATE_LIMIT_PER_S": f"{args.rate_limit:g}"}
    if args.rate_limit:
        env["JETSPARK_API_RATE_LIMIT_BURST"] = str(max(1, int(args.rate_limit)))
    figures = [measure(args.stack, processes, env, args) for processes in runs(args)]

    def scaling(figure: str) -> dict[str, float]:
        first = figures[0][figure]["ok_per_s"]
        return {
            f"{run['api_processes']} vs {figures[0]['api_processes']}": round(
                run[figure]["ok_per_s"] / first, 3
            )
            for run in figures[1:]
        }

    report = {
        "stack": args.stack,
        "cpus": os.cpu_count(),
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        "rate_limit": (
            f"{args.rate_limit:g}/s per principal, shared through Redis"
            if args.rate_limit
            else "off (JETSPARK_API_RATE_LIMIT_PER_S=0)"
        ),
        "load_generator": "wrk" if wrk.available() else "httpx",
        "runs": figures,
        "job_view_scaling": scaling("job_view"),
        "bare_fastapi_scaling": scaling("bare_fastapi_healthz"),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
