"""What ``config.notify`` a submission may name: refused ones are 422 naming each."""

from __future__ import annotations

from typing import Any

from tests.webhooks.conftest import Serve, client, job_body


def _refused(response: Any) -> dict[str, str]:
    assert response.status_code == 422, response.text
    problem = response.json()
    return {error["pointer"]: error["message"] for error in problem["errors"]}


def test_internal_targets_are_refused_at_submission(serve: Serve) -> None:
    with serve() as api, client(api) as alice:
        urls = (
            "http://127.0.0.1:9/hook",
            "http://169.254.169.254/latest/meta-data/",
            "http://localhost:9/hook",
            "http://10.1.2.3/hook",
            "http://[::ffff:127.0.0.1]/hook",
        )
        response = alice.post("/v1/jobs", json=job_body(*urls))
        errors = _refused(response)
        assert response.json()["type"].endswith("/webhook-refused")
        assert set(errors) == {f"/config/notify/{i}" for i in range(len(urls))}
        assert "127.0.0.1" in errors["/config/notify/0"]
        assert "non-public" in errors["/config/notify/0"]
        assert "metadata" in errors["/config/notify/1"]
        assert "localhost resolves to" in errors["/config/notify/2"]
        assert alice.get("/v1/jobs").json()["items"] == []


def test_metadata_is_refused_even_inside_an_allowed_network(serve: Serve) -> None:
    with serve(allowed_hosts=["169.254.0.0/16"]) as api, client(api) as alice:
        errors = _refused(alice.post("/v1/jobs", json=job_body("http://169.254.169.254/")))
        assert "metadata" in errors["/config/notify/0"]


def test_malformed_too_many_and_too_long_urls_are_refused(serve: Serve) -> None:
    with serve() as api, client(api) as alice:
        for urls, pointer in [
            (["ftp://example.com/x"], "/config/notify/0"),
            (["http://user:pw@example.com/"], "/config/notify/0"),
            (["not a url"], "/config/notify/0"),
            (["http://example.com/" + "a" * 2100], "/config/notify/0"),
            ([f"http://example.com/{i}" for i in range(9)], "/config/notify"),
        ]:
            errors = _refused(alice.post("/v1/jobs", json=job_body(*urls)))
            assert pointer in errors, errors


def test_without_a_secret_notify_is_refused(serve: Serve) -> None:
    with serve(secret=None) as api, client(api) as alice:
        errors = _refused(alice.post("/v1/jobs", json=job_body("http://example.com/hook")))
        assert "JETSPARK_WEBHOOK_SECRET" in errors["/config/notify"]
