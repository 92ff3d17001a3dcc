"""Target rules, signatures and one POST, without an API."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime

import pytest

from jetspark.settings import WebhookSettings
from jetspark.webhooks.delivery import Outcome, backoff, deliver, make_client
from jetspark.webhooks.delivery_queue import Claimed
from jetspark.webhooks.signing import signature, verify
from jetspark.webhooks.targets import TargetPolicy, TargetRefused
from tests.webhooks.receiver import receiver


def _claimed(url: str) -> Claimed:
    return Claimed(uuid.uuid4(), uuid.uuid4(), url, '{"a":1}', 1, datetime.now(UTC))


def _resolving(table: dict[str, list[str]]) -> TargetPolicy:
    return TargetPolicy(WebhookSettings(), resolver=lambda host, port: table[host])


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://127.0.0.1/", "non-public"),
        ("http://[::1]:8080/", "non-public"),
        ("http://192.168.1.1/", "non-public"),
        ("http://100.64.0.1/", "non-public"),
        ("http://169.254.169.254/", "metadata"),
        ("http://[fd00:ec2::254]/", "metadata"),
        ("http://[2002:7f00:1::]/", "non-public"),
        ("http://224.0.0.1/", "non-public"),
        ("http://rebind.example/", "non-public"),
        ("http://mixed.example/", "non-public"),
    ],
)
def test_non_public_addresses_are_refused(url: str, words: str) -> None:
    policy = _resolving({"rebind.example": ["10.0.0.7"], "mixed.example": ["8.8.8.8", "::1"]})
    with pytest.raises(TargetRefused, match=words):
        policy.check(url)


def test_allowed_hosts_narrow_names_and_open_networks() -> None:
    table = {"hooks.example.com": ["8.8.8.8"], "a.corp.example": ["10.1.2.3"]}
    settings = WebhookSettings(allowed_hosts=["hooks.example.com", "*.corp.example", "10.1.0.0/16"])
    policy = TargetPolicy(settings, resolver=lambda host, port: table[host])
    assert str(policy.check("https://hooks.example.com/x").address) == "8.8.8.8"
    assert str(policy.check("https://a.corp.example/x").address) == "10.1.2.3"
    with pytest.raises(TargetRefused, match="not in JETSPARK_WEBHOOK_ALLOWED_HOSTS"):
        policy.check("http://1.1.1.1/")
    named_only = TargetPolicy(
        WebhookSettings(allowed_hosts=["*.corp.example"]), resolver=lambda h, p: table[h]
    )
    with pytest.raises(TargetRefused, match="non-public"):  # a name does not open its network
        named_only.check("https://a.corp.example/x")


def test_signatures_verify_only_for_the_body_secret_and_a_fresh_timestamp() -> None:
    now = int(time.time())
    header = signature("s3cret", now, b'{"x":1}')
    assert header.startswith("sha256=") and len(header) == 7 + 64

    def check(secret: str, body: bytes, at: float | None = None) -> bool:
        return verify(secret, body, signature_header=header, timestamp_header=str(now), now=at)

    assert check("s3cret", b'{"x":1}')
    assert not check("s3cret", b'{"x":2}')
    assert not check("other", b'{"x":1}')
    assert not check("s3cret", b'{"x":1}', now + 301)
    assert not verify("s3cret", b'{"x":1}', signature_header=header, timestamp_header="x")


def test_backoff_doubles_up_to_its_cap() -> None:
    settings = WebhookSettings(backoff_initial_s=1, backoff_max_s=10)
    assert [backoff(settings, n).total_seconds() for n in (1, 2, 3, 4, 5, 60)] == [
        1,
        2,
        4,
        8,
        10,
        10,
    ]


def test_delivery_rechecks_the_target_and_pins_the_checked_address() -> None:
    """A name that resolved to a public address at submission and resolves to loopback at
    delivery (DNS rebinding) is refused without a connection; an allowed one is reached at
    the address that was checked, with the URL's own Host header."""

    async def attempt(policy: TargetPolicy, url: str) -> Outcome:
        settings = WebhookSettings(secret="k", timeout_s=5)
        async with make_client(settings) as http:
            return await deliver(http, policy, settings, _claimed(url))

    with receiver() as hook:
        port = hook.url.split(":")[2].split("/")[0]
        rebound = _resolving({"hooks.example": ["127.0.0.1"]})
        outcome = asyncio.run(attempt(rebound, f"http://hooks.example:{port}/hook"))
        assert outcome.result == "refused"
        metadata = asyncio.run(attempt(_resolving({}), "http://169.254.169.254/latest"))
        assert metadata.result == "refused"
        assert hook.received == []

        allowed = TargetPolicy(
            WebhookSettings(allowed_hosts=["127.0.0.1/32"]),
            resolver=lambda host, p: {"hooks.example": ["127.0.0.1"]}[host],
        )
        outcome = asyncio.run(attempt(allowed, f"http://hooks.example:{port}/hook"))
        assert outcome.result == "delivered"
        [got] = hook.received
        assert got.headers["Host"] == f"hooks.example:{port}"
