"""Redis Stream in, Redis Stream out: large orders copied to their own stream.

``orders`` reads the Redis stream ``orders`` from its start (entries ``{stream, id, ts,
fields}``; ``fields`` is the entry's map of strings); ``large`` keeps orders over 100;
``to_stream`` XADDs them to ``large-orders``. Names are the submitter's own: the worker keeps
them under ``<namespace>:user:<principal>:stream:``. The source never ends: stop the job
(cancel, or ``run_local(..., until=...)``) when you have seen enough.
"""

from __future__ import annotations

from jetspark.sdk import DAG, Edge
from launcher.script import main


def build() -> DAG:
    dag = DAG("redis-streams", {"members": 1, "local_parallelism": 1})
    orders = dag.new_vertex("orders", "source.redis_stream", streams=["orders"], start="0")
    large = dag.new_vertex(
        "large", "map",
        select={"order_id": "id", "customer": "fields['customer']",
                "amount": "cast(fields['amount'] as int)"},
    )  # fmt: skip
    over = dag.new_vertex("over_100", "filter", where="amount > 100")
    out = dag.new_vertex("to_stream", "sink.redis_stream", stream="large-orders")
    dag.edge(Edge.between(orders, large))
    dag.edge(Edge.between(large, over))
    dag.edge(Edge.between(over, out))
    return dag


if __name__ == "__main__":
    main(build())
