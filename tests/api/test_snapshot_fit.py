"""A snapshot restores only into a DAG it fits (``config.initial_snapshot``): refused with 409
naming what differs, before anything runs, when the partition count, a stateful vertex's
state key, its inbound partitioned edge or a key's kind changed; a rescale is accepted.

The snapshot rows are written as a worker commits them (``state_shape`` is the worker's own
record of a vertex); ``tests/worker/test_streaming.py`` restores a real one, rescaled."""

from __future__ import annotations

import copy
import itertools
import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session

from jetspark.dag.model import JobSpec
from jetspark.dag.plan import ExecutionPlan, build_plan
from jetspark.dag.snapshots import state_shape
from jetspark.dag.validate import validate_job
from jetspark.db.tables import Job, Snapshot
from jetspark.jobs import service
from jetspark.jobs.snapshots import SnapshotConflict
from jetspark.settings import DagLimits
from jetspark.tenants.principals import Principal, bare_token_name
from tests.api.conftest import TOKEN
from tests.worker.test_streaming import windowed_stream

OWNER = Principal(bare_token_name(TOKEN))
"""The ``http`` fixture's principal: the snapshots are its own."""
KEY_SCHEMA = json.dumps(
    {
        "type": "struct",
        "fields": [
            {"name": n, "type": t, "nullable": True, "metadata": {}}
            for n, t in (("__processor", "integer"), ("__partition", "integer"), ("__key", "long"))
        ],
    }
)


def snapshot_of(session: Session, body: dict[str, Any], *, recorded: bool = True) -> str:
    """Submit ``body`` and commit an exported snapshot of its window state, as a worker
    records it (``recorded`` False: as an older worker did, without edges and kinds)."""
    job = service.submit_job(
        session, spec=JobSpec.model_validate(body), limits=DagLimits(), principal=OWNER
    ).job
    shape = state_shape(planned(body), "windows")
    if not recorded:
        shape = {k: shape[k] for k in ("processor", "params")}
    name = f"fit-{uuid.uuid4().hex[:8]}"
    session.add(
        Snapshot(
            job_id=job.id,
            snapshot_id=3,
            epoch=3,
            name=name,
            principal=OWNER.name,
            source_offsets={
                "sources": {"numbers": 300},
                "source_kinds": {"numbers": "source.sequence"},
            },
            stats={
                "partition_count": 271,
                "vertices": {
                    "windows": {
                        **shape,
                        "schema": KEY_SCHEMA,
                        "keys": 5,
                        "rows": 5,
                        "bytes": 500,
                        "layout": {"parallelism": 2, "local_parallelism": 2},
                    }
                },
            },
            dag_fingerprint="",
            committed_at=datetime.now(UTC),
        )
    )
    session.commit()
    return name


def planned(body: dict[str, Any]) -> ExecutionPlan:
    """The plan of ``body``, as the API stores it and the worker runs it."""
    return build_plan(validate_job(JobSpec.model_validate(body)))


def stream(name: str | None, **config: Any) -> dict[str, Any]:
    body = windowed_stream("fit", count=3000, members=1, initial_snapshot=name)
    body["config"].update(config)
    return body


def edge(body: dict[str, Any]) -> dict[str, Any]:
    """The partitioned edge into the window vertex."""
    found: dict[str, Any] = next(e for e in body["dag"]["edges"] if e["to"] == "windows")
    return found


def changed(name: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    body = copy.deepcopy(stream(name))
    change(body)
    return body


def key_as_text(body: dict[str, Any]) -> None:
    body["dag"]["vertices"][1]["params"]["select"]["k"] = "cast(seq % 5 as string)"


REFUSED: list[tuple[str, Callable[[str], dict[str, Any]], str]] = [
    (
        "partition count",
        lambda n: stream(n, partition_count=1000),
        r"partition_count is 1000 but the snapshot's state is partitioned by 271",
    ),
    (
        "state key",
        lambda n: changed(n, lambda b: b["dag"]["vertices"][3]["params"].update(key="seq % 3")),
        r"'windows' changed its state key \(params.key\): 'k' -> 'seq % 3'",
    ),
    (
        "edge key",
        lambda n: changed(n, lambda b: edge(b).update(key="seq")),
        r"'windows': its inbound edge 0 changed its key: 'k' -> 'seq'",
    ),
    (
        "partitioner",
        lambda n: changed(n, lambda b: edge(b).update(partitioner="spark_hash")),
        r"inbound edge 0 changed its partitioner: 'murmur3' -> 'spark_hash'",
    ),
    (
        "routing",
        lambda n: changed(n, lambda b: edge(b).update(routing="unicast", key=None)),
        r"inbound edge 0 changed its routing: 'partitioned' -> 'unicast'",
    ),
    (
        "distributed",
        lambda n: changed(n, lambda b: edge(b).update(distributed=False)),
        r"inbound edge 0 changed its distributed: True -> False",
    ),
    (
        "key kind",
        lambda n: changed(n, key_as_text),
        r"'windows': its key was of kind integer and is of kind string now",
    ),
]


@pytest.mark.parametrize(("what", "body", "says"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_dag_the_snapshot_does_not_fit_is_refused_naming_what_differs(
    db_session: Session, what: str, body: Callable[[str], dict[str, Any]], says: str
) -> None:
    name = snapshot_of(db_session, stream(None))
    before = db_session.query(Job).count()
    with pytest.raises(SnapshotConflict, match=says):
        service.submit_job(
            db_session, spec=JobSpec.model_validate(body(name)), limits=DagLimits(), principal=OWNER
        )
    db_session.rollback()
    assert db_session.query(Job).count() == before, f"a job was stored for a changed {what}"


def test_every_difference_is_named_at_once_over_http(
    db_session: Session, http: httpx.Client
) -> None:
    name = snapshot_of(db_session, stream(None))
    body = changed(name, key_as_text)
    body["config"]["partition_count"] = 64
    edge(body)["partitioner"] = "spark_hash"
    response = http.post("/v1/jobs", json=body)
    assert response.status_code == 409, response.text
    assert response.headers["content-type"] == "application/problem+json"
    detail = response.json()["detail"]
    assert f"cannot start from snapshot {name!r}" in detail
    for says in ("partition_count is 64", "changed its partitioner", "of kind integer"):
        assert says in detail


def test_a_rescale_and_changes_that_keep_the_keys_are_accepted(db_session: Session) -> None:
    name = snapshot_of(db_session, stream(None))
    rescaled = stream(name, members=3, local_parallelism=2)
    other_lag = changed(name, lambda b: b["dag"]["vertices"][2]["params"].update(allowed_lag_ms=5))
    other_values = changed(
        name, lambda b: b["dag"]["vertices"][1]["params"]["select"].update(k="(seq + 1) % 5")
    )
    for body in (rescaled, other_lag, other_values):
        job = service.submit_job(
            db_session, spec=JobSpec.model_validate(body), limits=DagLimits(), principal=OWNER
        ).job
        assert job.status == "QUEUED"


def test_an_older_snapshot_is_checked_with_its_jobs_dag_or_its_state_schema(
    db_session: Session,
) -> None:
    """Snapshots written before edges and kinds were recorded: compared with the definition
    of the job that wrote it while PostgreSQL keeps it, else with its state's key type."""
    name = snapshot_of(db_session, stream(None), recorded=False)

    def submit(body: dict[str, Any]) -> None:
        service.submit_job(
            db_session, spec=JobSpec.model_validate(body), limits=DagLimits(), principal=OWNER
        )

    with pytest.raises(SnapshotConflict, match=r"inbound edge 0 changed its key"):
        submit(changed(name, lambda b: edge(b).update(key="seq")))
    db_session.rollback()
    submit(stream(name, members=2))  # a rescale

    # Its job gone (a named snapshot outlives it): the edges cannot be told any more, the
    # key's type still can.
    snapshot = db_session.query(Snapshot).filter_by(name=name, principal=OWNER.name).one()
    snapshot.job_id = uuid.uuid4()
    db_session.commit()
    with pytest.raises(
        SnapshotConflict, match=r"its key was of kind integer and is of kind string"
    ):
        submit(changed(name, key_as_text))
    db_session.rollback()
    submit(changed(name, lambda b: edge(b).update(key="seq")))


def kinds_of(vertices: list[dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, Any]:
    """The key kinds ``state_shape`` records of the DAG's vertex named ``state``."""
    body = {"name": "k", "dag": {"vertices": vertices, "edges": edges}}
    found: dict[str, Any] = state_shape(planned(body), "state")["key_types"]
    return found


def into_state(source: dict[str, Any], *steps: dict[str, Any], key: str) -> dict[str, Any]:
    """``source`` -> ``steps`` -> an aggregate ``state`` keyed by ``key`` over a partitioned
    edge keyed the same."""
    chain = [{"name": "src", **source}] + [{"name": f"s{i}", **s} for i, s in enumerate(steps)]
    state = {"name": "state", "processor": "aggregate",
             "params": {"key": key, "aggregations": {"n": "count(*)"}}}  # fmt: skip
    names = [v["name"] for v in chain] + ["state"]
    edges: list[dict[str, Any]] = [{"from": a, "to": b} for a, b in itertools.pairwise(names)]
    edges[-1].update(routing="partitioned", key=key)
    return kinds_of([*chain, state], edges)


ITEMS = {"processor": "source.items", "params": {"items": [{"w": "a", "n": 1, "x": 0.5}]}}


@pytest.mark.parametrize(
    ("source", "steps", "key", "expected"),
    [
        (ITEMS, [], "w", "string"),
        (ITEMS, [], "n", "integer"),
        (ITEMS, [], "x", "fractional"),
        (ITEMS, [], "n / 2", "fractional"),
        (ITEMS, [], "concat(w, n)", "string"),
        (ITEMS, [{"processor": "map", "params": {"select": {"w": "length(w)"}}}], "w", "integer"),
        (
            {"processor": "source.files", "params": {"path": "/tmp/in", "format": "text"}},
            [{"processor": "flat_map", "params": {"explode": "split(line, ' ')", "as": "word"}}],
            "word",
            "string",
        ),
        ({"processor": "source.sequence", "params": {"count": 3}}, [], "seq % 5", "integer"),
        (
            {"processor": "source.files", "params": {"path": "/tmp/in", "format": "csv"}},
            [],
            "a",
            None,
        ),
        (ITEMS, [], "no_such_field", None),
    ],
)
def test_key_kinds_are_told_from_the_dag_where_it_can_tell(
    source: dict[str, Any], steps: list[dict[str, Any]], key: str, expected: str | None
) -> None:
    assert into_state(source, *steps, key=key) == {"key": expected, "edge 0 key": expected}
