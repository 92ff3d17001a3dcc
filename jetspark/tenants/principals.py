"""Principals: the names tokens stand for, and the one place a token is checked.

A token is configured either as ``name:token`` in ``JETSPARK_API_PRINCIPALS`` or bare in
``JETSPARK_API_TOKENS``; a bare token is a principal of its own, named after a short hash of
it (``t-<12 hex>``), so configurations from before principals keep working. Principals named
in ``JETSPARK_API_ADMINS`` see and act on every principal's jobs.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A principal's name: it becomes part of Redis key names, so a small alphabet."""


class PrincipalConfigError(ValueError):
    """The principals setting cannot be read; the server refuses to start."""


@dataclass(frozen=True)
class Principal:
    """Who made a request."""

    name: str
    admin: bool = False

    def owns(self, owner: str | None) -> bool:
        """May this principal see and act on what ``owner`` owns?"""
        return self.admin or owner == self.name


LOCAL = Principal("legacy", admin=True)
"""In-process callers that act on the database directly (tests, benches): an admin, owner
of what it submits under the name rows made before principals carry."""


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def bare_token_name(token: str) -> str:
    """The principal a bare ``JETSPARK_API_TOKENS`` token stands for."""
    return "t-" + hashlib.sha256(token.encode()).hexdigest()[:12]


class PrincipalDirectory:
    """Token digests → principals. Only SHA-256 digests of the tokens are kept."""

    def __init__(self, entries: Iterable[tuple[str, str]], admins: Iterable[str] = ()) -> None:
        self.admins = frozenset(admins)
        self.entries: list[tuple[bytes, str]] = []
        seen: dict[bytes, str] = {}
        for name, token in entries:
            if not NAME.match(name):
                raise PrincipalConfigError(
                    f"principal name {name!r} must match {NAME.pattern} (letters, digits, _ . -)"
                )
            if not token:
                raise PrincipalConfigError(f"principal {name!r} has an empty token")
            digest = _digest(token)
            if seen.get(digest, name) != name:
                raise PrincipalConfigError(
                    f"principals {seen[digest]!r} and {name!r} have the same token"
                )
            seen[digest] = name
            self.entries.append((digest, name))

    @classmethod
    def of_settings(
        cls, *, tokens: Iterable[str], principals: Iterable[str], admins: Iterable[str] = ()
    ) -> PrincipalDirectory:
        """From ``JETSPARK_API_TOKENS`` (bare tokens) and ``JETSPARK_API_PRINCIPALS``
        (``name:token`` entries)."""
        entries = [(bare_token_name(token), token) for token in tokens]
        for entry in principals:
            name, colon, token = entry.partition(":")
            if not colon:
                raise PrincipalConfigError(
                    f"a JETSPARK_API_PRINCIPALS entry is not name:token ({name[:16]!r}...)"
                )
            entries.append((name.strip(), token.strip()))
        return cls(entries, admins)

    def authenticate(self, token: str) -> Principal | None:
        """The principal of ``token``, or None. Every entry is compared, in constant time
        each, so the time taken does not tell which entry (or how much of one) matched."""
        given = _digest(token)
        found: str | None = None
        for digest, name in self.entries:
            if hmac.compare_digest(given, digest):
                found = name
        if found is None:
            return None
        return Principal(found, admin=found in self.admins)
