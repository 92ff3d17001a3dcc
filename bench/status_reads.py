"""Control-plane benchmark: status reads/s and latency, submissions/s, idle memory, start time.

Run: ``.venv/bin/python -m bench.status_reads``. It starts ``jetspark up`` (everything embedded)
in a temporary home (``--stack direct``: the API alone under uvicorn, with the servers named by
``JETSPARK_DATABASE_URL`` / ``JETSPARK_REDIS_URL`` or embedded ones; the default when the
``jetspark`` CLI is not installed), then loads it from loopback with ``wrk`` (Debian package
``wrk``) when installed, else with an asyncio httpx generator. The baseline in the same run is
``/healthz`` on the same server: the ratio shows what auth + PostgreSQL cost on top of bare
FastAPI.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import httpx

from bench.stack import RunningStack, direct_stack, running_stack

LOAD_BEFORE = os.getloadavg()[0]
"""The machine's 1-minute load average when the run began: other work skews the figures."""
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "word-count.json"
DURATION_S = 10
CONNECTIONS = 32


def submissions_per_s(stack: RunningStack, count: int = 200) -> float:
    body = json.loads(EXAMPLE.read_text())
    headers = {"Authorization": f"Bearer {stack.token}"}
    with httpx.Client(base_url=stack.url, headers=headers, timeout=30) as client:
        started = time.perf_counter()
        for i in range(count):
            body["name"] = f"bench-{i}"
            client.post("/v1/jobs", json=body).raise_for_status()
        return count / (time.perf_counter() - started)


def load_with_wrk(url: str, token: str | None) -> dict[str, float]:
    command = ["wrk", "-t1", f"-c{CONNECTIONS}", f"-d{DURATION_S}s", "--latency", url]
    if token:
        command[1:1] = ["-H", f"Authorization: Bearer {token}"]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    return {"rps": rps, "p50_ms": _wrk_ms(out, "50%"), "p99_ms": _wrk_ms(out, "99%")}


def _wrk_ms(out: str, label: str) -> float:
    value, unit = re.search(rf"{label}\s+([\d.]+)(us|ms|s)", out).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


async def _load_with_httpx(url: str, token: str | None) -> dict[str, float]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    latencies: list[float] = []
    stop_at = time.perf_counter() + DURATION_S

    async def client_loop(client: httpx.AsyncClient) -> None:
        while time.perf_counter() < stop_at:
            began = time.perf_counter()
            (await client.get(url)).raise_for_status()
            latencies.append((time.perf_counter() - began) * 1000)

    async with httpx.AsyncClient(headers=headers) as client:
        started = time.perf_counter()
        await asyncio.gather(*(client_loop(client) for _ in range(CONNECTIONS)))
        elapsed = time.perf_counter() - started
    cuts = statistics.quantiles(latencies, n=100)
    return {"rps": len(latencies) / elapsed, "p50_ms": cuts[49], "p99_ms": cuts[98]}


def load(url: str, token: str | None) -> dict[str, float]:
    if shutil.which("wrk"):
        return load_with_wrk(url, token)
    return asyncio.run(_load_with_httpx(url, token))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    has_cli = importlib.util.find_spec("jetspark.cli") is not None
    parser = argparse.ArgumentParser(prog="python -m bench.status_reads", description=__doc__)
    parser.add_argument(
        "--stack",
        choices=["up", "direct"],
        default="up" if has_cli else "direct",
        help="`jetspark up`, or the API alone under uvicorn (default: up when the CLI exists)",
    )
    parser.add_argument(
        "--api-workers", type=int, default=1, help="uvicorn processes (--stack direct)"
    )
    parser.add_argument("--duration", type=int, default=DURATION_S, help="seconds per load run")
    parser.add_argument("--connections", type=int, default=CONNECTIONS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    global DURATION_S, CONNECTIONS
    args = parse_args(argv)
    DURATION_S, CONNECTIONS = args.duration, args.connections
    stack_cm = running_stack() if args.stack == "up" else direct_stack(api_workers=args.api_workers)
    with stack_cm as stack:
        time.sleep(5)  # let the stack settle before reading its idle memory
        idle_rss_mib = stack.rss_bytes() / 2**20
        subs = submissions_per_s(stack)
        headers = {"Authorization": f"Bearer {stack.token}"}
        job = httpx.get(f"{stack.url}/v1/jobs?limit=1", headers=headers).json()["items"][0]
        status = load(f"{stack.url}/v1/jobs/{job['id']}", stack.token)
        baseline = load(f"{stack.url}/healthz", None)
    report = {
        "stack": args.stack if args.stack == "up" else f"direct, {args.api_workers} worker(s)",
        "cpus": os.cpu_count(),
        "load_average_before": round(LOAD_BEFORE, 2),
        "start_to_ready_s": round(stack.start_s, 2),
        "idle_rss_mib": round(idle_rss_mib, 1),
        "submissions_per_s": round(subs, 1),
        "status_reads": status,
        "healthz_baseline": baseline,
        "status_vs_healthz_ratio": round(status["rps"] / baseline["rps"], 3),
        "load_generator": "wrk" if shutil.which("wrk") else "httpx",
        "connections": CONNECTIONS,
        "duration_s": DURATION_S,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
