"""A table ETL: read a database table in parallel, aggregate it, write the totals to a table.

``sales`` is read through the operator's connection ``warehouse`` (``JETSPARK_JDBC_CONNECTIONS``:
the DAG names it, the credentials stay with the server), split into ``members x
local_parallelism`` reads on ``id``; only the columns named are read and ``where`` is pushed
down to the database. ``by_region`` sums each region's paid amounts and ``totals`` replaces
the rows of ``sales_by_region`` in one transaction (created when missing): a failed run
leaves the table as it was.

    python examples/table_etl.py            # the JSON body (= table-etl.json)
    python examples/table_etl.py --local    # run it here (the connection set in the environment)
    python examples/table_etl.py --submit   # submit it to JETSPARK_URL and print results
"""

from __future__ import annotations

from jetspark.sdk import DAG, Edge
from launcher.script import main

ROWS = 10_000
"""The ids ``sales`` is split on run from 1 to ROWS (rows past the bounds are read too)."""


def build() -> DAG:
    dag = DAG("table-etl", {"members": 1, "local_parallelism": 2})
    sales = dag.new_vertex(
        "sales", "source.jdbc",
        connection="warehouse", table="sales", columns=["id", "region", "amount"],
        where="status = 'paid'", partition_column="id", lower_bound=1, upper_bound=ROWS + 1,
    )  # fmt: skip
    by_region = dag.new_vertex(
        "by_region", "aggregate",
        key="region", aggregations={"total": "sum(amount)", "orders": "count(*)"},
    )  # fmt: skip
    totals = dag.new_vertex(
        "totals", "sink.jdbc", connection="warehouse", table="sales_by_region", mode="overwrite"
    )
    dag.edge(Edge.between(sales, by_region).partitioned("region"))
    dag.edge(Edge.between(by_region, totals))
    return dag


if __name__ == "__main__":
    main(build())
