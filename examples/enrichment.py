"""Enrich orders with their products: a hash join whose build side is consumed first.

``products`` is the table: its edge into ``join`` is ordinal 0 (the build side), broadcast
to every processor of the join and given priority -1, so the whole table is in before any
order (ordinal 1, priority 0) is read, as Jet's ``HashJoin`` needs. Each order comes out with
its product's name and price, and ``priced`` works out the line's total.
"""

from __future__ import annotations

from typing import Any

from jetspark.sdk import DAG, Edge
from launcher.script import main

PRODUCTS: list[dict[str, Any]] = [
    {"sku": "A1", "title": "kettle", "price": 30},
    {"sku": "B2", "title": "teapot", "price": 25},
    {"sku": "C3", "title": "cups", "price": 12},
]
ORDERS: list[dict[str, Any]] = [
    {"order": 1, "sku": "A1", "qty": 1},
    {"order": 2, "sku": "C3", "qty": 6},
    {"order": 3, "sku": "B2", "qty": 2},
    {"order": 4, "sku": "C3", "qty": 2},
    {"order": 5, "sku": "Z9", "qty": 1},
]


def build() -> DAG:
    dag = DAG("enrichment", {"members": 2, "local_parallelism": 2})
    products = dag.new_vertex("products", "source.items", items=PRODUCTS)
    orders = dag.new_vertex("orders", "source.items", items=ORDERS)
    join = dag.new_vertex("join", "hash_join", build_key="sku", probe_key="sku", how="left")
    priced = dag.new_vertex(
        "priced", "map",
        select={"order": "order", "title": "coalesce(title, 'unknown')", "qty": "qty",
                "total": "qty * coalesce(price, 0)"},
    )  # fmt: skip
    dag.edge(Edge.from_(products).to(join, 0).broadcast().distributed().priority(-1))
    dag.edge(Edge.from_(orders).to(join, 1))
    dag.edge(Edge.between(join, priced))
    dag.edge(Edge.between(priced, dag.new_vertex("lines", "sink.results")))
    return dag


if __name__ == "__main__":
    main(build())
