"""Load one URL with ``wrk`` (Debian package ``wrk``) and count the answers by status class.

Only 2xx answers count as served: a 429 or a 503 is cheap to send and would make a rate-limited
or broken server look fast. wrk's own "Requests/sec" counts every answer, so a Lua script
tallies statuses per thread and prints them once wrk is done. Without wrk, an asyncio httpx
load generator does the same (slower: it needs more CPU per request than the server).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

COUNTING_SCRIPT = """
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) ok = 0; other = 0 end
function response(status, headers, body)
  if status >= 200 and status < 300 then ok = ok + 1 else other = other + 1 end
end
function done(summary, latency, requests)
  local total_ok, total_other = 0, 0
  for _, thread in ipairs(threads) do
    total_ok = total_ok + thread:get("ok")
    total_other = total_other + thread:get("other")
  end
  io.write(string.format("STATUS ok=%d other=%d us=%d\\n", total_ok, total_other,
                         summary.duration))
end
"""


@dataclass(frozen=True)
class Load:
    """What one load run got."""

    ok_per_s: float
    """2xx answers per second."""
    other: int
    """Answers that were not 2xx (429, 5xx, ...) over the whole run."""
    p50_ms: float
    p99_ms: float
    generator: str

    def as_dict(self) -> dict[str, float | int | str]:
        return {k: round(v, 2) if isinstance(v, float) else v for k, v in asdict(self).items()}


def available() -> bool:
    return shutil.which("wrk") is not None


def load(url: str, *, token: str | None, seconds: int, connections: int) -> Load:
    """``connections`` concurrent connections on ``url`` for ``seconds``."""
    if available():
        return _wrk(url, token, seconds, connections)
    return asyncio.run(_httpx(url, token, seconds, connections))


def _wrk(url: str, token: str | None, seconds: int, connections: int) -> Load:
    with tempfile.TemporaryDirectory(prefix="jetspark-wrk-") as folder:
        script = Path(folder) / "count.lua"
        script.write_text(COUNTING_SCRIPT)
        command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
        command += ["-s", str(script)]
        if token:
            command += ["-H", f"Authorization: Bearer {token}"]
        out = subprocess.run(
            [*command, url], check=True, capture_output=True, text=True, timeout=seconds + 60
        ).stdout
    found = re.search(r"STATUS ok=(\d+) other=(\d+) us=(\d+)", out)
    if found is None:
        raise RuntimeError(f"wrk printed no status counts:\n{out}")
    ok, other, micros = (int(group) for group in found.groups())
    return Load(
        ok_per_s=ok / (micros / 1e6),
        other=other,
        p50_ms=_wrk_ms(out, "50%"),
        p99_ms=_wrk_ms(out, "99%"),
        generator="wrk",
    )


def _wrk_ms(out: str, label: str) -> float:
    found = re.search(rf"{label}\s+([\d.]+)(us|ms|s)\b", out)
    if found is None:
        return float("nan")
    value, unit = found.groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


async def _httpx(url: str, token: str | None, seconds: int, connections: int) -> Load:
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    latencies: list[float] = []
    other = 0
    stop_at = time.perf_counter() + seconds

    async def client_loop(client: httpx.AsyncClient) -> None:
        nonlocal other
        while time.perf_counter() < stop_at:
            began = time.perf_counter()
            response = await client.get(url)
            if 200 <= response.status_code < 300:
                latencies.append((time.perf_counter() - began) * 1000)
            else:
                other += 1

    limits = httpx.Limits(max_connections=connections)
    async with httpx.AsyncClient(headers=headers, limits=limits, timeout=30) as client:
        started = time.perf_counter()
        await asyncio.gather(*(client_loop(client) for _ in range(connections)))
        elapsed = time.perf_counter() - started
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [0.0] * 99
    return Load(len(latencies) / elapsed, other, cuts[49], cuts[98], "httpx")
