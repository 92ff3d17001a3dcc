"""An under-replicated job (its last snapshot short of backups: a lost Redis node) as the API
tells it: the job view's ``under_replicated``, ``/readyz``'s detail, the Prometheus gauges
and the page's marker. Jobs are written as a worker's snapshot commit leaves them (the
cluster test, ``tests/worker/test_redis_cluster.py``, makes one for real)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session

from jetspark.dag.model import JobSpec
from jetspark.db.tables import Job
from jetspark.jobs import service
from jetspark.jobs.status import JobStatus
from jetspark.settings import DagLimits
from jetspark.tenants.principals import Principal, bare_token_name
from tests.api.browser import offline_tab, serious_violations
from tests.api.conftest import TOKEN
from tests.api.test_prometheus import scrape
from tests.worker.test_streaming import windowed_stream

SINCE = "2026-01-02T03:04:05+00:00"


def replication(replicas: int, short: dict[str, int]) -> dict[str, Any]:
    """The ``replication`` entry ``worker.engine.streaming.backups.BackupWatch`` writes."""
    return {
        "backup_count": 1,
        "replicas": replicas,
        "under_replicated": bool(short),
        "since": SINCE if short else None,
        "short": short,
    }


def job_with(session: Session, status: JobStatus, entry: dict[str, Any]) -> Job:
    """A windowed stream with ``backup_count: 1``, submitted, in ``status`` with a last
    snapshot whose ``replication`` is ``entry``."""
    body = windowed_stream("windows", count=None, members=1)
    body["config"]["backup_count"] = 1
    spec = JobSpec.model_validate(body)
    owner = Principal(bare_token_name(TOKEN))
    job = service.submit_job(session, spec=spec, limits=DagLimits(), principal=owner).job
    job.status = status.value
    job.last_snapshot = {"snapshot_id": 7, "epoch": 7, "replication": entry}
    job.finished_at = datetime.now(UTC) if status.is_terminal else None
    session.commit()
    return job


@pytest.fixture
def jobs(db_session: Session, api_url: str) -> Iterator[dict[str, Job]]:
    before = scrape(api_url)[("jetspark_jobs_under_replicated", ())]
    made = {
        "short": job_with(db_session, JobStatus.RUNNING, replication(0, {"10.0.0.34:6379": 0})),
        "whole": job_with(db_session, JobStatus.RUNNING, replication(1, {})),
        "finished": job_with(
            db_session, JobStatus.COMPLETED, replication(0, {"10.0.0.35:6379": 0})
        ),
    }
    assert scrape(api_url)[("jetspark_jobs_under_replicated", ())] == before + 1
    yield made
    for job in made.values():  # finished: no longer counted by the session's other tests
        job.status, job.finished_at = JobStatus.CANCELLED.value, datetime.now(UTC)
    db_session.commit()


def test_the_view_readyz_and_metrics_say_which_jobs_are_under_replicated(
    jobs: dict[str, Job], http: httpx.Client, api_url: str
) -> None:
    short = http.get(f"/v1/jobs/{jobs['short'].id}").json()
    assert short["under_replicated"] == {
        "backup_count": 1,
        "replicas": 0,
        "since": "2026-01-02T03:04:05Z",
        "short": {"10.0.0.34:6379": 0},
    }
    assert short["last_snapshot"]["replication"]["under_replicated"] is True
    assert http.get(f"/v1/jobs/{jobs['whole'].id}").json()["under_replicated"] is None
    assert http.get(f"/v1/jobs/{jobs['finished'].id}").json()["under_replicated"] is None

    ready = httpx.get(f"{api_url}/readyz")
    assert ready.status_code == 200  # degraded, not down: the service goes on
    body = ready.json()
    assert body["status"] == "degraded"
    assert body["checks"]["snapshot_backups"].startswith("under-replicated: ")
    assert "under-replicated" in body["detail"] and "since" in body["detail"]
    assert all(str(job.id) not in body["detail"] for job in jobs.values()), "open route"

    samples = scrape(api_url)
    missing = "jetspark_job_snapshot_backups_missing"
    assert samples[(missing, (("job", str(jobs["short"].id)),))] == 1
    assert (missing, (("job", str(jobs["whole"].id)),)) not in samples
    assert (missing, (("job", str(jobs["finished"].id)),)) not in samples


@pytest.mark.slow
def test_the_page_marks_an_under_replicated_job(jobs: dict[str, Job], api_url: str) -> None:
    with offline_tab() as browser:
        tab = browser.page
        tab.goto(f"{api_url}/")
        tab.fill("#token", TOKEN)
        tab.click("#token-form button")
        tab.wait_for_selector("#list-view:not([hidden])")
        for name, marked in (("short", True), ("whole", False)):
            tab.goto(f"{api_url}/#/jobs/{jobs[name].id}")
            tab.wait_for_function(
                "id => document.getElementById('job-id').textContent === id",
                arg=str(jobs[name].id),
            )
            marker = tab.locator("#job-replication")
            assert marker.is_visible() is marked
            if marked:
                assert marker.text_content() == "under-replicated: 0 of 1 backups"
                assert marker.get_attribute("title") == "10.0.0.34:6379 has 0"
                assert serious_violations(tab) == []
        assert not browser.errors, f"the page raised: {browser.errors}"
        assert not browser.blocked, f"the page asked the internet for: {browser.blocked}"
