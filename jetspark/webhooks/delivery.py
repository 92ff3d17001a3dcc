"""One webhook POST: checked target, pinned address, signed body, bounded in time and size.

The host is resolved and every address checked (``TargetPolicy``) just before the POST, and
the connection goes to the address that was checked (the ``Host`` header and TLS name stay
the URL's host), so a name that resolves to a public address at submission and to an
internal one later is refused. Redirects are not followed, proxies from the environment are
not used, the whole attempt has one deadline and at most ``max_response_bytes`` of the
answer are read.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import timedelta

import httpx

from jetspark.settings import WebhookSettings
from jetspark.webhooks.delivery_queue import Claimed
from jetspark.webhooks.signing import (
    DELIVERY_HEADER,
    EVENT,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    signature,
)
from jetspark.webhooks.targets import Target, TargetPolicy, TargetRefused

USER_AGENT = "jetspark-webhooks/1"


@dataclass(frozen=True)
class Outcome:
    """How one attempt went: ``delivered``, ``refused`` (the rules refused the target: not
    tried again) or ``failed`` (tried again after a backoff, until given up)."""

    result: str
    status_code: int | None = None
    error: str | None = None


def make_client(settings: WebhookSettings) -> httpx.AsyncClient:
    """The deliverer's client: no redirects, no proxies from the environment."""
    return httpx.AsyncClient(
        follow_redirects=False,
        trust_env=False,
        timeout=httpx.Timeout(settings.timeout_s),
        headers={"User-Agent": USER_AGENT},
    )


def backoff(settings: WebhookSettings, attempts: int) -> timedelta:
    """The wait after ``attempts`` failed POSTs: doubling from ``backoff_initial_s``."""
    seconds = settings.backoff_initial_s * 2 ** min(max(attempts - 1, 0), 40)
    return timedelta(seconds=min(settings.backoff_max_s, seconds))


def _pinned(target: Target) -> tuple[httpx.URL, dict[str, str], dict[str, str]]:
    """The URL to connect to (the checked address), its Host header and TLS extension."""
    url = httpx.URL(target.url)
    address = str(target.address)
    pinned = url.copy_with(host=address)
    default_port = 443 if target.scheme == "https" else 80
    host = f"[{target.host}]" if ":" in target.host else target.host
    host_header = host if target.port == default_port else f"{host}:{target.port}"
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    return pinned, {"Host": host_header}, extensions


async def _post(
    client: httpx.AsyncClient,
    target: Target,
    claimed: Claimed,
    settings: WebhookSettings,
) -> Outcome:
    body = claimed.body.encode()
    timestamp = int(time.time())
    url, host, extensions = _pinned(target)
    headers = {
        **host,
        "Content-Type": "application/json",
        DELIVERY_HEADER: str(claimed.id),
        EVENT_HEADER: EVENT,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature(settings.secret or "", timestamp, body),
    }
    request = client.build_request(
        "POST", url, content=body, headers=headers, extensions=extensions
    )
    response = await client.send(request, stream=True)
    try:
        read = 0
        async for chunk in response.aiter_raw():
            read += len(chunk)
            if read >= settings.max_response_bytes:
                break  # enough: the status is what counts
    finally:
        await response.aclose()
    if 200 <= response.status_code < 300:
        return Outcome("delivered", response.status_code)
    reason = response.reason_phrase or ""
    if response.is_redirect:
        reason = f"redirect to {response.headers.get('location', '?')[:200]} not followed"
    return Outcome("failed", response.status_code, f"HTTP {response.status_code} {reason}")


async def deliver(
    client: httpx.AsyncClient,
    policy: TargetPolicy,
    settings: WebhookSettings,
    claimed: Claimed,
) -> Outcome:
    """Check ``claimed.url`` again and POST its body once, within ``timeout_s``."""

    async def attempt() -> Outcome:
        target = await asyncio.to_thread(policy.check, claimed.url)
        return await _post(client, target, claimed, settings)

    try:
        return await asyncio.wait_for(attempt(), timeout=settings.timeout_s)
    except TargetRefused as refused:
        return Outcome("refused", None, str(refused))
    except TimeoutError:
        return Outcome("failed", None, f"no answer within {settings.timeout_s:g} s")
    except httpx.HTTPError as error:
        return Outcome("failed", None, f"{type(error).__name__}: {error}"[:500])
    except OSError as error:
        return Outcome("failed", None, f"{type(error).__name__}: {error}"[:500])
