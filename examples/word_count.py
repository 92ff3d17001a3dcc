"""Word count in two stages, as the seeds' (and Jet's) ``WordCount`` does it.

``tokenize`` splits lines into words; ``accumulate`` counts each word on the processor its
words are partitioned to on the local member; ``combine`` merges those partial counts across
members (a distributed partitioned edge on the word). A batch job: it ends when the lines do.

    python examples/word_count.py            # the JSON body (= word-count.json)
    python examples/word_count.py --local    # run it here on a local SparkSession
    python examples/word_count.py --submit   # submit it to JETSPARK_URL and print results
"""

from __future__ import annotations

from jetspark.sdk import DAG, Edge
from launcher.script import main

LINES = ["to be or not to be", "that is the question"]


def build() -> DAG:
    dag = DAG("word-count", {"members": 2})
    lines = dag.new_vertex("lines", "source.items", items=[{"line": line} for line in LINES])
    tokenize = dag.new_vertex(
        "tokenize", "flat_map", explode="split(lower(line), '\\\\W+')", **{"as": "word"}
    ).local_parallelism(2)
    accumulate = dag.new_vertex(
        "accumulate", "aggregate",
        key="word", aggregations={"count": "count(*)"}, stage="accumulate",
    )  # fmt: skip
    combine = dag.new_vertex(
        "combine", "aggregate", key="key", aggregations={"count": "count(*)"}, stage="combine"
    )
    sink = dag.new_vertex("sink", "sink.results")
    dag.edge(Edge.between(lines, tokenize))
    dag.edge(Edge.between(tokenize, accumulate).partitioned("word"))
    dag.edge(Edge.between(accumulate, combine).partitioned("key").distributed())
    dag.edge(Edge.between(combine, sink))
    return dag


if __name__ == "__main__":
    main(build())
