"""The API token ``jetspark up`` generates once and keeps in ``<home>/token`` (mode 0600)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from jetspark.sdk.token import read_token, token_path


def ensure_token(home: Path) -> str:
    """The kept token; generated and written with mode 0600 the first time."""
    existing = read_token(home)
    if existing:
        return existing
    home.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    path = token_path(home)
    path.unlink(missing_ok=True)  # an empty or unreadable leftover: replace it
    # O_EXCL with the mode given at creation: the token is never readable by others, not even
    # for the moment between a write and a chmod.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(token + "\n")
    return token
