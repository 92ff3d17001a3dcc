"""A submission's webhooks: its ``config.notify`` URLs, checked, and the server's defaults."""

from __future__ import annotations

from jetspark.settings import WebhookSettings
from jetspark.webhooks.targets import TargetPolicy, TargetRefused


class NotifyRefused(Exception):
    """``config.notify`` names URLs the server will not POST to (422, each named)."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__(problems[0][1])
        self.problems = problems
        """``(JSON pointer, message)`` per refused URL."""


def webhooks_of(
    notify: list[str], settings: WebhookSettings, policy: TargetPolicy
) -> list[dict[str, str]]:
    """The webhooks a new job keeps (``jobs.webhooks``): its own URLs, each resolved and
    checked by ``policy`` (``NotifyRefused`` names every refused one), then the defaults."""
    problems: list[tuple[str, str]] = []
    if notify and not settings.secret:
        problems.append(
            (
                "/config/notify",
                "webhooks are off on this server (no JETSPARK_WEBHOOK_SECRET to sign them "
                "with): leave config.notify out",
            )
        )
    else:
        for index, url in enumerate(notify):
            try:
                policy.check(url)
            except TargetRefused as refused:
                problems.append((f"/config/notify/{index}", str(refused)))
    if problems:
        raise NotifyRefused(problems)
    hooks = [{"url": url, "source": "job"} for url in dict.fromkeys(notify)]
    if settings.secret:
        hooks += [{"url": url, "source": "server"} for url in settings.default_urls]
    return hooks
