"""``GET /``: the web status page (static files; the data comes from the token-guarded API)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).resolve().parents[1] / "static"
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
"""Only our own scripts run, so a name that slipped past escaping still cannot execute."""

router = APIRouter(tags=["web"], include_in_schema=False)


def page_headers() -> dict[str, str]:
    """What every page of ours is served with (the status page, the API reference)."""
    return {
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }


@router.get("/", operation_id="web-index")
def index() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html", headers=page_headers())


@router.get("/page-config.json", operation_id="web-page-config")
def page_config(request: Request) -> JSONResponse:
    """What the page needs of the server's settings: where operators see Spark's UI (a link
    to the operator's authenticating proxy, no data: public as the page itself is)."""
    settings = request.app.state.api_settings
    return JSONResponse({"spark_ui_url": settings.spark_ui_url}, headers=page_headers())


static_files = StaticFiles(directory=STATIC_DIR)
