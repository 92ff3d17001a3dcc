"""``ResultsWriter``: one numbering and one cap for every way results reach PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from jetspark.dag.model import JobSpec
from jetspark.db.tables import Job, JobResult
from jetspark.jobs import service
from jetspark.settings import DagLimits, ResultLimits
from tests.worker.conftest import drive_until, status_of
from worker.loop import Worker
from worker.results import ResultsTooLarge, ResultsWriter

BODY: dict[str, Any] = {
    "name": "results",
    "dag": {
        "vertices": [
            {"name": "src", "processor": "source.items", "params": {"items": [{"s": "x"}]}},
            {"name": "big", "processor": "map", "params": {"select": {"s": "repeat(s, 5000)"}}},
            {"name": "out", "processor": "sink.results"},
        ],
        "edges": [{"from": "src", "to": "big"}, {"from": "big", "to": "out"}],
    },
    "config": {"members": 1, "local_parallelism": 1},
}


def _job(sessions: sessionmaker[Session]) -> uuid.UUID:
    with sessions() as session:
        job = service.submit_job(session, spec=JobSpec.model_validate(BODY), limits=DagLimits())
        return job.job.id


def _stored(sessions: sessionmaker[Session], job_id: uuid.UUID) -> list[tuple[int, str, Any]]:
    with sessions() as session:
        rows = session.execute(
            select(JobResult.seq, JobResult.vertex, JobResult.item)
            .where(JobResult.job_id == job_id)
            .order_by(JobResult.seq)
        )
        return [(r.seq, r.vertex, r.item) for r in rows]


def _write(sessions: sessionmaker[Session], writer: ResultsWriter, results: dict[str, Any]) -> None:
    with sessions() as session:
        writer.write(session, results)
        session.commit()
    writer.committed()


def test_records_are_numbered_after_the_stored_ones_and_capped_in_all(
    sessions: sessionmaker[Session],
) -> None:
    job_id = _job(sessions)
    writer = ResultsWriter(job_id, results_cap=5)
    _write(sessions, writer, {"a": [{"n": 0}, {"n": 1}], "b": [{"n": 2}]})
    _write(sessions, writer, {"a": [{"n": 3}], "b": [{"n": 4}, {"n": 5}]})
    _write(sessions, writer, {"a": [{"n": 6}]})  # the cap is reached: nothing more kept
    assert _stored(sessions, job_id) == [
        (0, "a", {"n": 0}),
        (1, "a", {"n": 1}),
        (2, "b", {"n": 2}),
        (3, "a", {"n": 3}),
        (4, "b", {"n": 4}),
    ]
    # Another run of the same job (a resumed stream) goes on after what is stored.
    again = ResultsWriter(job_id, results_cap=7)
    _write(sessions, again, {"c": [{"n": 7}, {"n": 8}, {"n": 9}]})
    assert [seq for seq, _, _ in _stored(sessions, job_id)] == list(range(7))


def test_a_write_rolled_back_is_not_counted(sessions: sessionmaker[Session]) -> None:
    job_id = _job(sessions)
    writer = ResultsWriter(job_id, results_cap=2, limits=ResultLimits(max_job_bytes=30))
    with sessions() as session:
        writer.write(session, {"a": [{"n": 1}, {"n": 2}]})
        session.rollback()
    _write(sessions, writer, {"a": [{"n": 1}, {"n": 2}]})  # the retry fits
    assert [item for _, _, item in _stored(sessions, job_id)] == [{"n": 1}, {"n": 2}]


def test_every_value_json_holds_is_stored_as_it_was(sessions: sessionmaker[Session]) -> None:
    """What COPY's text format escapes, what UTF-8 and JSON escape, numbers past orjson's
    64 bits; NaN and the infinities, which JSON has not, are stored as null."""
    job_id = _job(sessions)
    tricky = [
        {"s": 'tab\there\nnew line\r\\N \\ "quoted" é 漢字 \u2028 😀', "k": "\\"},
        {"nested": {"a": [1, 2.5, None, True, {"b": "\\\\"}]}, "": "empty key"},
        {"big": 2**70, "small": -(2**63), "f": 0.1, "e": 1.5e-7, "tiny": 5e-324},
    ]
    _write(sessions, ResultsWriter(job_id), {"out": tricky})
    _write(sessions, ResultsWriter(job_id), {"out": [{"nan": float("nan"), "inf": float("inf")}]})
    assert [item for _, _, item in _stored(sessions, job_id)] == [
        *tricky,
        {"nan": None, "inf": None},
    ]


def test_items_and_a_runs_results_are_bounded_in_bytes(sessions: sessionmaker[Session]) -> None:
    job_id = _job(sessions)
    limits = ResultLimits(max_item_bytes=20, max_job_bytes=40)
    writer = ResultsWriter(job_id, limits=limits)
    with sessions() as session, pytest.raises(ResultsTooLarge, match="MAX_ITEM_BYTES"):
        writer.write(session, {"a": [{"s": "x" * 30}]})
    _write(sessions, writer, {"a": [{"s": "x" * 8}]})  # 15 bytes
    with sessions() as session, pytest.raises(ResultsTooLarge, match="MAX_JOB_BYTES"):
        writer.write(session, {"a": [{"s": "y" * 8}, {"s": "z" * 8}]})  # 45 in all
    assert len(_stored(sessions, job_id)) == 1


@pytest.mark.spark
def test_a_job_over_the_bytes_fails_saying_so(
    make_worker: Callable[..., Worker],
    submit: Callable[[dict[str, Any]], uuid.UUID],
    sessions: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JETSPARK_RESULTS_MAX_ITEM_BYTES", "1000")
    worker = make_worker("w-results")
    job_id = submit(BODY)
    drive_until([worker], lambda: status_of(sessions, job_id) == "FAILED", what="failed")
    with sessions() as session:
        job = session.get(Job, job_id)
        assert job is not None
        assert job.error_type == "ResultsTooLarge"
        assert "JETSPARK_RESULTS_MAX_ITEM_BYTES" in (job.error_message or "")
    assert _stored(sessions, job_id) == []
