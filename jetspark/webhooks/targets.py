"""Where webhooks may go: the URL's shape, and every address its host resolves to.

By default only public addresses are reachable: loopback, private, link-local, shared,
reserved and multicast addresses are refused, and cloud metadata addresses always are.
``WebhookSettings.allowed_hosts`` narrows the hosts and opens listed networks. The same
check runs at submission and again at every delivery, on the addresses the POST then
connects to (a host that resolves elsewhere later is caught: DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from jetspark.settings import WebhookSettings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

MAX_URLS = 8
"""``config.notify`` URLs one job may name."""
MAX_URL_CHARS = 2048

METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200", "169.254.170.2")
)
"""Cloud instance metadata endpoints: refused whatever ``allowed_hosts`` lists."""

Resolver = Callable[[str, int], Iterable[str]]


class TargetRefused(ValueError):
    """A webhook URL the rules refuse; the message names the URL and why."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"webhook URL {url[:200]!r} is refused: {reason}")
        self.url, self.reason = url, reason


def check_syntax(url: str) -> str:
    """``url`` if it is an absolute http(s) URL with a host and no credentials."""
    parts = _split(url)
    del parts
    return url


def _split(url: str) -> SplitResult:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise TargetRefused(url, f"not a URL ({error})") from None
    if parts.scheme not in {"http", "https"}:
        raise TargetRefused(url, "only http and https URLs are allowed")
    if not parts.hostname:
        raise TargetRefused(url, "it names no host")
    if parts.username is not None or parts.password is not None:
        raise TargetRefused(url, "credentials in the URL are not allowed (requests are signed)")
    if parts.fragment:
        raise TargetRefused(url, "a fragment is not allowed")
    if port == 0:
        raise TargetRefused(url, "port 0 is not allowed")
    if any(ch.isspace() or ord(ch) < 0x21 for ch in url):
        raise TargetRefused(url, "whitespace and control characters are not allowed")
    return parts


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect (``address``) and what to call the host."""

    url: str
    scheme: str
    host: str
    port: int
    address: IPAddress
    """The first allowed address the host resolved to: the POST connects there."""


def default_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class TargetPolicy:
    """``WebhookSettings.allowed_hosts`` parsed once; ``check`` resolves and judges a URL."""

    def __init__(self, settings: WebhookSettings, resolver: Resolver = default_resolver) -> None:
        self.names: list[str] = []
        self.networks: list[IPNetwork] = []
        for entry in settings.allowed_hosts:
            try:
                self.networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.names.append(entry.lower().rstrip("."))
        self.resolver = resolver

    def _name_listed(self, host: str) -> bool:
        return any(
            host == name or (name.startswith("*.") and host.endswith(name[1:]))
            for name in self.names
        )

    def _in_networks(self, address: IPAddress) -> bool:
        return any(address in network for network in self.networks)

    def judge(self, url: str, host: str, address: IPAddress) -> None:
        """Refuse ``address`` (one that ``host`` resolved to) unless the rules allow it."""
        forms = _forms(address)  # an IPv6 address that carries an IPv4 one is judged as both
        where = f"{host} is" if host == str(address) else f"{host} resolves to"
        if any(form in METADATA_ADDRESSES for form in forms):
            raise TargetRefused(url, f"{where} {address}, a cloud metadata address")
        listed = any(self._in_networks(form) for form in forms)
        if (self.names or self.networks) and not (listed or self._name_listed(host)):
            raise TargetRefused(url, f"{host} ({address}) is not in JETSPARK_WEBHOOK_ALLOWED_HOSTS")
        if not listed and not all(_public(form) for form in forms):
            raise TargetRefused(
                url,
                f"{where} {address}, a non-public address (loopback, private, "
                "link-local or reserved); list its network in JETSPARK_WEBHOOK_ALLOWED_HOSTS "
                "to allow it",
            )

    def check(self, url: str) -> Target:
        """Resolve ``url``'s host and check every address; refused: ``TargetRefused``."""
        parts = _split(url)
        host = (parts.hostname or "").lower().rstrip(".")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            literal: IPAddress | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if literal is not None:
            addresses = [literal]
        else:
            try:
                resolved = list(dict.fromkeys(self.resolver(host, port)))
            except (OSError, UnicodeError) as error:
                raise TargetRefused(url, f"{host} does not resolve ({error})") from None
            addresses = [ipaddress.ip_address(a.partition("%")[0]) for a in resolved]
            if not addresses:
                raise TargetRefused(url, f"{host} does not resolve")
        for address in addresses:
            self.judge(url, host, address)
        return Target(url, parts.scheme, host, port, addresses[0])


def _forms(address: IPAddress) -> list[IPAddress]:
    """``address`` and the IPv4 addresses an IPv6 one carries (mapped, 6to4, Teredo)."""
    forms: list[IPAddress] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            forms.append(address.ipv4_mapped)
        if address.sixtofour is not None:
            forms.append(address.sixtofour)
        if address.teredo is not None:
            forms.extend(address.teredo)
    return forms


def _public(address: IPAddress) -> bool:
    return address.is_global and not address.is_multicast
