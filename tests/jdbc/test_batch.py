"""``source.jdbc`` and ``sink.jdbc`` in batch jobs against the real PostgreSQL."""

from __future__ import annotations

import uuid

import pytest
from pyspark.sql import SparkSession

from jetspark.jdbc.connections import JdbcConnections
from tests.jdbc.conftest import BOB, Db, RunJdbc, body
from worker.engine.errors import EngineError
from worker.engine.execution import VertexFailed
from worker.engine.expressions import user_column
from worker.engine.jdbc_io import MARKERS, Target, read_table, write_committed
from worker.engine.ops.jdbc import read_ranges

pytestmark = pytest.mark.spark

ROWS = 5_000


def sales(db: Db) -> None:
    db.run(
        f"CREATE TABLE {db.table('sales')} (id BIGINT PRIMARY KEY, region TEXT NOT NULL,"
        " amount INT NOT NULL)"
    )
    db.run(
        f"INSERT INTO {db.table('sales')} SELECT g, 'r' || (g % 7), g % 100 - 10"
        f" FROM generate_series(1, {ROWS}) g"
    )


def source(db: Db, **params: object) -> dict[str, object]:
    return {
        "name": "read",
        "processor": "source.jdbc",
        "params": {"connection": "main", "table": db.table("sales"), **params},
    }


def test_a_table_etl_is_exact(db: Db, run_jdbc: RunJdbc, spark: SparkSession) -> None:
    """Read in parallel (split on id), filter pushed down, group, write a new table."""
    sales(db)
    job = body(
        [
            source(
                db,
                columns=["id", "region", "amount"],
                where="amount > 0",
                partition_column="id",
                lower_bound=1,
                upper_bound=ROWS + 1,
            ),
            {
                "name": "totals",
                "processor": "aggregate",
                "params": {
                    "key": "region",
                    "aggregations": {"total": "sum(amount)", "n": "count(*)"},
                },
            },
            {
                "name": "write",
                "processor": "sink.jdbc",
                "params": {"connection": "main", "table": db.table("totals"), "mode": "overwrite"},
            },
        ],
        [
            {"from": "read", "to": "totals", "routing": "partitioned", "key": "region"},
            {"from": "totals", "to": "write"},
        ],
        local_parallelism=3,
    )
    outcome = run_jdbc(job)
    # One exchange (the partial groups'): each range read and aggregated where Spark put it,
    # the groups not moved again for a sink that writes them in one transaction.
    assert _staged_write_plan(spark).count("Exchange ") == 1
    expected = db.rows(
        f"SELECT region, SUM(amount), COUNT(*) FROM {db.table('sales')} WHERE amount > 0"
        " GROUP BY region ORDER BY region"
    )
    got = db.rows(f"SELECT key, total, n FROM {db.table('totals')} ORDER BY key")
    assert [(r, int(t), int(n)) for r, t, n in got] == [(r, int(t), int(n)) for r, t, n in expected]
    assert outcome.vertex_counts["read"].items_out == sum(int(n) for _, _, n in expected)
    # Run again: overwrite replaces the rows, it does not add to them.
    run_jdbc(job)
    assert len(db.rows(f"SELECT * FROM {db.table('totals')}")) == len(expected)


def _staged_write_plan(spark: SparkSession) -> str:
    """The final physical plan of the last SQL execution that wrote a staging table."""
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    for index in reversed(range(executions.size())):
        plan = str(executions.apply(index).physicalPlanDescription())
        if "AdaptiveSparkPlan" in plan and "== Final Plan ==" in plan and "Scan JDBC" in plan:
            return plan.split("== Initial Plan ==")[0]
    raise AssertionError("no staged write among Spark's SQL executions")


def target(db: Db, connections: JdbcConnections, table: str) -> Target:
    return Target("v", "source.jdbc", connections.for_principal("main", "alice"), db.table(table))


def test_a_read_is_split_over_the_processors_and_the_where_is_pushed_down(
    db: Db, connections: JdbcConnections, spark: SparkSession
) -> None:
    sales(db)
    frame = read_table(
        spark,
        target(db, connections, "sales"),
        columns=["id", "amount"],
        where=user_column("amount > 50 AND region = 'r3'"),
        partition=("id", 1, ROWS + 1),
        partitions=4,
    )
    assert frame.rdd.getNumPartitions() == 4
    assert frame.columns == ["id", "amount"]
    plan = frame._jdf.queryExecution().executedPlan().toString()
    assert "PushedFilters" in plan and "GreaterThan(amount,50)" in plan, plan
    assert "EqualTo(region,r3)" in plan, plan
    count = db.rows(
        f"SELECT COUNT(*) FROM {db.table('sales')} WHERE amount > 50 AND region = 'r3'"
    )[0][0]
    assert frame.count() == count
    sizes = frame.rdd.glom().map(len).collect()
    assert all(size > 0 for size in sizes), sizes


@pytest.mark.parametrize("fetch_size", [None, 1, 10_000])
def test_a_read_fetches_the_rows_per_round_trip_it_is_given(
    db: Db, connections: JdbcConnections, spark: SparkSession, fetch_size: int | None
) -> None:
    """Spark's JDBC relation carries the fetch size (0, the driver's default, when none is
    given), and the rows read are the table's whatever it is."""
    sales(db)
    frame = read_table(
        spark,
        target(db, connections, "sales"),
        columns=["id"],
        where=None,
        partition=("id", 1, ROWS + 1),
        partitions=2,
        fetch_size=fetch_size,
    )
    leaves = frame._jdf.queryExecution().optimizedPlan().collectLeaves()
    relation = leaves.apply(0).relation()
    assert int(relation.jdbcOptions().fetchSize()) == (fetch_size or 0)
    assert sorted(r.id for r in frame.collect()) == list(range(1, ROWS + 1))


@pytest.mark.parametrize(
    ("partition", "asked"),
    [(None, 4), (("id", 1, ROWS + 1), 4), (("id", 1, 3), 4), (("id", 10, 11), 3),
     (("id", -5, 5), 1), (("id", 1, ROWS + 1), 7)],
)  # fmt: skip
def test_the_reads_a_source_expects_are_those_spark_makes(
    db: Db,
    connections: JdbcConnections,
    spark: SparkSession,
    partition: tuple[str, int, int] | None,
    asked: int,
) -> None:
    """The source keeps Spark's partitions as its processors' reads when there are as many
    as processors, counting them by Spark's rule instead of asking Spark."""
    sales(db)
    frame = read_table(
        spark,
        target(db, connections, "sales"),
        columns=["id"],
        where=None,
        partition=partition,
        partitions=asked,
    )
    assert read_ranges(partition, asked) == frame.rdd.getNumPartitions()


def test_an_overwrite_that_fails_leaves_the_table_as_it_was(
    db: Db, connections: JdbcConnections, spark: SparkSession
) -> None:
    """The last row breaks the table's CHECK: nothing of the overwrite is kept."""
    db.run(f"CREATE TABLE {db.table('out')} (id BIGINT, amount INT CHECK (amount < 1000))")
    db.run(f"INSERT INTO {db.table('out')} VALUES (1, 1), (2, 2)")
    rows = [(i, i % 100) for i in range(1, 2_000)] + [(2_000, 5_000)]
    frame = spark.createDataFrame(rows, "id bigint, amount int").repartition(4)
    with pytest.raises(EngineError) as failed:
        write_committed(
            spark, target(db, connections, "out"), frame, overwrite=True, owner="job-x", epoch=0
        )
    assert "source.jdbc: committing to" in str(failed.value), failed.value
    assert "check" in str(failed.value).lower()
    assert db.rows(f"SELECT id, amount FROM {db.table('out')} ORDER BY id") == [(1, 1), (2, 2)]
    assert not [t for t in tables(db) if t.startswith("jetspark_stage_")]


def tables(db: Db) -> list[str]:
    return [
        r[0]
        for r in db.rows(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = :s",
            s=db.schema,
        )
    ]


def test_a_committed_epoch_is_never_written_twice(
    db: Db, connections: JdbcConnections, spark: SparkSession
) -> None:
    frame = spark.createDataFrame([(i,) for i in range(100)], "id bigint")
    out = target(db, connections, "appended")
    owner = f"job-{uuid.uuid4()}"
    first = write_committed(spark, out, frame, overwrite=False, owner=owner, epoch=3)
    again = write_committed(spark, out, frame, overwrite=False, owner=owner, epoch=3)
    assert (first.skipped, again.skipped) == (False, True)
    assert db.rows(f"SELECT COUNT(*) FROM {db.table('appended')}") == [(100,)]
    write_committed(spark, out, frame, overwrite=False, owner=owner, epoch=4)
    assert db.rows(f"SELECT COUNT(*) FROM {db.table('appended')}") == [(200,)]
    assert db.rows(f"SELECT epoch FROM {db.table(MARKERS)} ORDER BY epoch") == [(3,), (4,)]
    assert sorted(tables(db)) == sorted(["appended", MARKERS])


def test_bad_tables_and_columns_fail_the_job_naming_the_vertex_and_no_credential(
    db: Db, run_jdbc: RunJdbc
) -> None:
    sales(db)
    missing_table = body(
        [source(db, table=db.table("nope")), {"name": "out", "processor": "sink.logger"}],
        [{"from": "read", "to": "out"}],
    )
    missing_column = body(
        [source(db, columns=["id", "colour"]), {"name": "out", "processor": "sink.logger"}],
        [{"from": "read", "to": "out"}],
    )
    for job, needle in ((missing_table, "does not exist"), (missing_column, "'colour'")):
        with pytest.raises(VertexFailed) as failed:
            run_jdbc(job)
        message = str(failed.value)
        assert "vertex 'read' failed" in message and "source.jdbc:" in message, message
        assert needle in message, message
        assert db.password not in message and db.jdbc_url not in message


def test_a_principal_not_allowed_the_connection_fails_before_anything_is_read(
    db: Db, run_jdbc: RunJdbc
) -> None:
    """Checked again when the job runs (the setting may have changed since submission)."""
    sales(db)
    job = body(
        [source(db), {"name": "out", "processor": "sink.results"}], [{"from": "read", "to": "out"}]
    )
    with pytest.raises(VertexFailed, match="may not use the JDBC connection 'main'"):
        run_jdbc(job, principal=BOB)


def test_the_password_is_taken_out_of_error_text(db: Db, connections: JdbcConnections) -> None:
    out = target(db, connections, "x")
    error = RuntimeError(
        f"java.sql.SQLException: bad login for {db.jdbc_url} with password {db.password}\n\tat x"
    )
    message = str(out.refused(error, "reading"))
    assert db.password not in message and db.jdbc_url not in message
    assert "<connection main>" in message and "***" in message
