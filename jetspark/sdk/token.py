"""The bearer token a client sends: the one given, ``JETSPARK_TOKEN``, else the one ``jetspark
up`` keeps in ``<JETSPARK_HOME>/token`` (mode 0600; ``jetspark.cli.token`` writes it)."""

from __future__ import annotations

import os
from pathlib import Path

from jetspark.settings import HomeSettings

TOKEN_FILE = "token"


def token_path(home: Path) -> Path:
    return home / TOKEN_FILE


def read_token(home: Path) -> str | None:
    """The kept token, or None when there is none (or it cannot be read)."""
    try:
        token = token_path(home).read_text().strip()
    except OSError:
        return None
    return token or None


def resolve_token(given: str | None = None, home: Path | None = None) -> str | None:
    """``given``, else ``JETSPARK_TOKEN``, else the token ``jetspark up`` kept in its home."""
    if given:
        return given
    if os.environ.get("JETSPARK_TOKEN"):
        return os.environ["JETSPARK_TOKEN"]
    return read_token(home if home is not None else HomeSettings().home)
