"""The API's own cost per request, against a bare FastAPI app in the same run.

Run: ``make bench-api`` (``.venv/bin/python -m bench.api_overhead [--seconds 5]
[--connections 16] [--rounds 3]``). Three targets, each loaded with ``wrk`` (one thread,
``--connections`` connections, ``--seconds``; only 2xx answers counted, see ``bench.wrk``),
in turn, ``--rounds`` times; the median run of each is kept:

1. ``/healthz`` of a bare FastAPI app (``bench.bare_app``) under the same uvicorn options;
2. jetspark's ``/healthz`` (``bench.stack.direct_stack``: the API alone, one process);
3. ``GET /v1/jobs/{id}`` of a queued job with a bearer token (the job view, served from the
   NOTIFY-invalidated cache as clients polling a job are).

The rate limit is off (``bench.stack.UNLIMITED``): a limited run measures the limit. Ratios
are ``2 / 1`` and ``3 / 1``; the issue's targets are >= 0.9 and >= 0.6. The machine's load
average before and after is printed with the figures: other work on the machine skews them.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import httpx

from bench import wrk
from bench.processes import exit_on_sigterm, uvicorn_server
from bench.stack import RunningStack, direct_stack

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "word-count.json"
BARE_APP = "bench.bare_app:app"


def queued_job(stack: RunningStack) -> str:
    """Submit the example word count (no worker runs it: it stays QUEUED); its id."""
    headers = {"Authorization": f"Bearer {stack.token}"}
    response = httpx.post(
        f"{stack.url}/v1/jobs", json=json.loads(EXAMPLE.read_text()), headers=headers, timeout=30
    )
    response.raise_for_status()
    job_id: str = response.json()["id"]
    return job_id


def best(loads: list[wrk.Load]) -> wrk.Load:
    """The median run by 2xx/s (of an odd number of rounds: a run that happened)."""
    return sorted(loads, key=lambda load: load.ok_per_s)[len(loads) // 2]


def measure(seconds: int, connections: int, rounds: int, api_workers: int = 1) -> dict[str, Any]:
    """Both servers up at once (an idle one costs nothing), the targets loaded in turn,
    ``rounds`` times: a burst of load elsewhere on the machine hits every target alike."""
    load_before = os.getloadavg()[0]
    runs: dict[str, list[wrk.Load]] = {"bare": [], "healthz": [], "view": []}
    with (
        uvicorn_server(BARE_APP) as (bare_url, _, _bare),
        direct_stack(api_workers=api_workers) as stack,
    ):
        job_id = queued_job(stack)
        targets = {
            "bare": (f"{bare_url}/healthz", None),
            "healthz": (f"{stack.url}/healthz", None),
            "view": (f"{stack.url}/v1/jobs/{job_id}", stack.token),
        }
        for _ in range(rounds):
            for name, (url, token) in targets.items():
                runs[name].append(
                    wrk.load(url, token=token, seconds=seconds, connections=connections)
                )
    bare, healthz, view = best(runs["bare"]), best(runs["healthz"]), best(runs["view"])
    return {
        "cpus": os.cpu_count(),
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        "api_processes": api_workers,
        "rate_limit": "off (JETSPARK_API_RATE_LIMIT_PER_S=0)",
        "connections": connections,
        "seconds": seconds,
        "rounds": rounds,
        "bare_fastapi_healthz": bare.as_dict(),
        "jetspark_healthz": healthz.as_dict(),
        "jetspark_job_view": view.as_dict(),
        "healthz_ratio": round(healthz.ok_per_s / bare.ok_per_s, 3),
        "job_view_ratio": round(view.ok_per_s / bare.ok_per_s, 3),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.api_overhead", description=__doc__)
    parser.add_argument("--seconds", type=int, default=5, help="seconds per load run")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3, help="runs per target (median kept)")
    parser.add_argument("--api-workers", type=int, default=1, help="API processes")
    args = parser.parse_args(argv)
    exit_on_sigterm()
    figures = measure(args.seconds, args.connections, args.rounds, args.api_workers)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
