"""The ``jetspark`` console script: the core's client commands and the server commands."""

from __future__ import annotations

from jetspark.cli.main import Command, build_app
from launcher import servers, up

SERVERS: tuple[Command, ...] = (
    ("up", up.up),
    ("api", servers.api),
    ("worker", servers.worker),
    ("migrate", servers.migrate),
)

app = build_app(SERVERS)
