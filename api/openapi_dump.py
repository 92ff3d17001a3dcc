"""Write the app's OpenAPI document: ``python -m api.openapi_dump openapi/openapi.json``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from api.app import create_app


def openapi_document() -> dict[str, Any]:
    # The document does not depend on where the servers are; these URLs are never dialled.
    app = create_app(
        database_url="postgresql://unused@127.0.0.1:1/unused", redis_url="redis://127.0.0.1:1"
    )
    document: dict[str, Any] = app.openapi()
    return document


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def main() -> None:
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "openapi/openapi.json")
    target.write_text(render(openapi_document()))


if __name__ == "__main__":
    main()
