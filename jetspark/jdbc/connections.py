"""Operator-named JDBC connections (``JETSPARK_JDBC_CONNECTIONS``) and who may use them.

A DAG never carries a URL, a user or a password: it names a connection the operator set
up, and the connection says which principals may use it. The setting itself holds no
secret either: each password comes from a file or an environment variable, read on the
worker when the job runs, and never appears in a view, a log line or an error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jetspark.dag.errors import DagProblem
from jetspark.dag.model import JobSpec
from jetspark.json_setting import json_object

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
"""A connection's name, as DAGs give it."""

ANY_PRINCIPAL = "*"

_KEYS = frozenset({"url", "user", "user_env", "password_env", "password_file", "principals"})
_KEYS |= {"driver"}
_SECRET_IN_URL = re.compile(r"(?i)[?&;:](password|pwd|user|username)=|//[^/@]*:[^/@]*@")

KNOWN_DRIVERS = {
    "jdbc:postgresql:": "org.postgresql.Driver",
    "jdbc:mysql:": "com.mysql.cj.jdbc.Driver",
    "jdbc:mariadb:": "org.mariadb.jdbc.Driver",
    "jdbc:sqlserver:": "com.microsoft.sqlserver.jdbc.SQLServerDriver",
    "jdbc:oracle:": "oracle.jdbc.OracleDriver",
    "jdbc:h2:": "org.h2.Driver",
    "jdbc:sqlite:": "org.sqlite.JDBC",
}
"""The driver class of a URL's scheme: Spark registers it from the jar (its own class loader
is not the one ``DriverManager`` searches)."""


class JdbcConfigError(ValueError):
    """``JETSPARK_JDBC_CONNECTIONS`` cannot be used; one line naming what is wrong."""


class ConnectionRefused(ValueError):
    """A DAG names a connection that does not exist or that its principal may not use."""


@dataclass(frozen=True)
class Connection:
    """One operator-named database. ``repr`` shows no credential (only where they come from)."""

    name: str
    url: str
    principals: frozenset[str]
    user: str | None = None
    user_env: str | None = None
    password_env: str | None = None
    password_file: str | None = field(default=None)
    driver: str | None = None

    def allows(self, principal: str) -> bool:
        return ANY_PRINCIPAL in self.principals or principal in self.principals

    def driver_class(self) -> str | None:
        if self.driver:
            return self.driver
        return next((c for p, c in KNOWN_DRIVERS.items() if self.url.startswith(p)), None)

    def secrets(self) -> dict[str, str]:
        """The user and password, read now (on the worker, when the job runs)."""
        found: dict[str, str] = {}
        user = self.user
        if self.user_env is not None:
            user = os.environ.get(self.user_env)
            if user is None:
                raise JdbcConfigError(
                    f"connection {self.name!r}: its user_env {self.user_env} is not set"
                )
        if user is not None:
            found["user"] = user
        if self.password_env is not None:
            password = os.environ.get(self.password_env)
            if password is None:
                raise JdbcConfigError(
                    f"connection {self.name!r}: its password_env {self.password_env} is not set"
                )
            found["password"] = password
        elif self.password_file is not None:
            try:
                found["password"] = Path(self.password_file).read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as error:
                raise JdbcConfigError(
                    f"connection {self.name!r}: its password_file cannot be read "
                    f"({type(error).__name__})"
                ) from None
        return found

    def secrets_or_none(self) -> list[str]:
        """The password if it can be read now (to take it out of error text), else none."""
        try:
            password = self.secrets().get("password")
        except JdbcConfigError:
            return []
        return [password] if password else []

    def spark_options(self) -> dict[str, str]:
        """Spark's JDBC options of this connection, credentials included: for the worker's
        reader and writer only, never logged or shown."""
        options = {"url": self.url, **self.secrets()}
        driver = self.driver_class()
        if driver is not None:
            options["driver"] = driver
        return options


@dataclass(frozen=True)
class JdbcConnections:
    """Every connection by name; empty when the operator named none."""

    by_name: Mapping[str, Connection] = field(default_factory=dict)

    def for_principal(self, name: str, principal: str) -> Connection:
        """The connection ``name`` if ``principal`` may use it; ``ConnectionRefused`` names
        which of the two is wrong (an unknown name and a forbidden one differ, as the
        names are the operator's, not secrets)."""
        connection = self.by_name.get(name)
        if connection is None:
            known = ", ".join(sorted(self.by_name)) or "none are configured"
            raise ConnectionRefused(f"unknown JDBC connection {name!r} (known: {known})")
        if not connection.allows(principal):
            raise ConnectionRefused(
                f"principal {principal!r} may not use the JDBC connection {name!r}"
            )
        return connection

    @classmethod
    def parse(cls, text: str | None, source: str = "JETSPARK_JDBC_CONNECTIONS") -> JdbcConnections:
        """The setting's JSON object: ``{"name": {"url": ..., "user": ..., "password_env":
        ... | "password_file": ..., "principals": [...], "driver": ...}}``."""
        if text is None or not text.strip():
            return cls()
        value = json_object(text, source, "connections by name", JdbcConfigError)
        return cls({name: _connection(name, entry, source) for name, entry in value.items()})


def _connection(name: str, entry: Any, source: str) -> Connection:
    where = f"{source}: connection {name[:64]!r}"
    if not isinstance(name, str) or not NAME.match(name):
        raise JdbcConfigError(f"{where}: a name is letters, digits, _ . - (at most 64)")
    if not isinstance(entry, dict):
        raise JdbcConfigError(f"{where} must be an object")
    if "password" in entry:
        # Named, never echoed: a password in the setting would be shown wherever it is.
        raise JdbcConfigError(f"{where}: give password_env or password_file, not password")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise JdbcConfigError(f"{where}: unknown keys {unknown} (known: {sorted(_KEYS)})")
    strings = {k: v for k, v in entry.items() if k != "principals"}
    for key, item in strings.items():
        if not isinstance(item, str) or not item:
            raise JdbcConfigError(f"{where}: {key} must be a non-empty string")
    url = str(entry.get("url", ""))
    if not url.startswith("jdbc:"):
        raise JdbcConfigError(f"{where}: url must be a jdbc: URL")
    if _SECRET_IN_URL.search(url):
        raise JdbcConfigError(
            f"{where}: the url must not carry a user or password (give user/user_env and "
            "password_env/password_file)"
        )
    if "password_env" in entry and "password_file" in entry:
        raise JdbcConfigError(f"{where}: give password_env or password_file, not both")
    if "user" in entry and "user_env" in entry:
        raise JdbcConfigError(f"{where}: give user or user_env, not both")
    principals = entry.get("principals")
    if not isinstance(principals, list) or not all(isinstance(p, str) and p for p in principals):
        raise JdbcConfigError(
            f"{where}: principals must be a list of principal names ({ANY_PRINCIPAL!r}: any)"
        )
    return Connection(
        name=name,
        url=url,
        principals=frozenset(principals),
        user=entry.get("user"),
        user_env=entry.get("user_env"),
        password_env=entry.get("password_env"),
        password_file=entry.get("password_file"),
        driver=entry.get("driver"),
    )


def named_connections(spec: JobSpec) -> Iterable[tuple[str, object]]:
    """(JSON pointer, value) of every param naming a connection: the registry's
    ``Resources.connections`` of each vertex's kind."""
    from jetspark.dag.kinds import get_processor

    for i, vertex in enumerate(spec.dag.vertices):
        kind = get_processor(vertex.processor)
        for param in kind.resources.connections if kind is not None else ():
            yield f"/dag/vertices/{i}/params/{param}", vertex.params.get(param)


def connection_problems(
    spec: JobSpec, principal: str, connections: JdbcConnections
) -> list[DagProblem]:
    """A problem (422, pointing at it) for each connection that is unknown or that
    ``principal`` may not use: nothing is read or written then."""
    problems = []
    for pointer, name in named_connections(spec):
        if not isinstance(name, str):
            continue  # the params model names it (validate_job)
        try:
            connections.for_principal(name, principal)
        except ConnectionRefused as refused:
            problems.append(DagProblem(pointer, str(refused)))
    return problems
