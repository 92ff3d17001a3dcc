"""``GET /docs``: the API reference (Swagger UI), from files this server serves itself.

FastAPI's default page loads Swagger UI from a CDN, so it is blank without internet; this
one reads ``/static/vendor`` (api/static/vendor/README.md) and ``/openapi.json`` only.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import FileResponse

from api.routers.web import STATIC_DIR, page_headers

router = APIRouter(tags=["web"], include_in_schema=False)


@router.get("/docs", operation_id="web-docs")
def docs() -> FileResponse:
    return FileResponse(STATIC_DIR / "docs.html", headers=page_headers())
