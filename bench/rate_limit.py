"""Rate-limit accuracy: requests allowed per second against the configured rate.

Run: ``.venv/bin/python -m bench.rate_limit [--api-workers 2]``. For each rate it starts the
API alone (``bench.stack.direct_stack``, ``--api-workers`` processes on one port, the limit
shared through Redis) with ``JETSPARK_API_RATE_LIMIT_PER_S`` set, loads ``GET /v1/jobs`` from
one token with 32 concurrent connections for a while (the "Bearer" scheme spelled eight ways
in turn, which must not help), and reports the 200s per second after the burst against the
configured rate: a ratio of 1.0 is exact, whatever the number of processes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import httpx

from bench.processes import exit_on_sigterm
from bench.stack import direct_stack

SPELLINGS = ["Bearer", "bearer", "BEARER", "bEaReR", "BeArEr", "BEARer", "beaRER", "BearER"]


async def _load(url: str, token: str, duration_s: float, connections: int) -> tuple[int, int]:
    ok = limited = 0
    stop_at = time.perf_counter() + duration_s

    async def loop(client: httpx.AsyncClient, n: int) -> None:
        nonlocal ok, limited
        i = n
        while time.perf_counter() < stop_at:
            scheme = SPELLINGS[i % len(SPELLINGS)]
            i += 1
            response = await client.get("/v1/jobs", headers={"Authorization": f"{scheme} {token}"})
            if response.status_code == 200:
                ok += 1
            elif response.status_code == 429:
                limited += 1
            else:
                raise RuntimeError(f"unexpected {response.status_code}: {response.text[:200]}")

    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        await asyncio.gather(*(loop(client, n) for n in range(connections)))
    return ok, limited


def measure(
    rate: float, burst: int, duration_s: float, connections: int, api_workers: int = 1
) -> dict[str, float]:
    env = {"JETSPARK_API_RATE_LIMIT_PER_S": str(rate), "JETSPARK_API_RATE_LIMIT_BURST": str(burst)}
    with direct_stack(api_workers=api_workers, extra_env=env) as stack:
        started = time.perf_counter()
        ok, limited = asyncio.run(_load(stack.url, stack.token, duration_s, connections))
        elapsed = time.perf_counter() - started
    allowed_per_s = (ok - burst) / elapsed
    return {
        "api_processes": api_workers,
        "configured_per_s": rate,
        "burst": burst,
        "seconds": round(elapsed, 2),
        "allowed": ok,
        "refused_429": limited,
        "allowed_per_s_after_burst": round(allowed_per_s, 2),
        "ratio": round(allowed_per_s / rate, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rates", default="10,50,200", help="comma-separated requests/s")
    parser.add_argument("--burst", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--api-workers", type=int, default=1, help="API processes")
    args = parser.parse_args()
    exit_on_sigterm()
    for rate in (float(r) for r in args.rates.split(",")):
        got = measure(rate, args.burst, args.seconds, args.connections, args.api_workers)
        print(json.dumps(got), flush=True)


if __name__ == "__main__":
    main()
