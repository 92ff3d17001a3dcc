"""The baseline of the API benches: a bare FastAPI app with one ``/healthz``, nothing else.

Served by the same uvicorn, with the same options, as jetspark's API in the same run
(``bench.api_overhead``, ``bench.status_reads``): the ratio to it is what jetspark's own
middleware, auth and views cost per request.
"""

from __future__ import annotations

from fastapi import FastAPI

app = FastAPI()


@app.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}
