"""Spark work named after the vertex it is: what lets Spark's own metrics be read per vertex.

Spark runs a job's vertices fused into pipelines and keeps its metrics per SQL plan node and
per stage, not per vertex. Two names tie them back (read by ``worker/spark_pipelines.py``):

- every observation (``DataFrame.observe``: the engine's counts and watermark tops) is named
  ``jetspark~<vertex, UTF-8 in hex>[.<vertex>...]~<uuid>`` (several when one operator
  observes for several vertices: ``observed``), and Spark's SQL plan shows it by name
  (``CollectMetrics <name>, [...]``) inside the pipeline that computes the vertex's frame;
- a Spark action a vertex runs itself (a sink's write, a dead end's count) carries the job's
  description followed by ``VERTEX_MARK`` and the vertex's name: the query's last pipeline
  is that vertex's.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from pyspark import SparkContext

OBSERVATION_PREFIX = "jetspark~"
VERTEX_MARK = " · vertex "
"""Between a job's description and the name of the vertex running the action."""
_DESCRIPTION = "spark.job.description"
_NAMED = re.compile(r"CollectMetrics jetspark~([0-9a-f.]*)~[0-9a-f]{32}")


def job_description(job_id: object) -> str:
    """The description a job's Spark work carries (Spark's UI shows it; its queries are
    told by it)."""
    return f"jetspark job {job_id}"


def observation_name(*vertices: str | None) -> str:
    """A unique observation name naming the vertices whose frame it observes (one, or
    several whose aggregates one operator observes together)."""
    named = ".".join((vertex or "").encode().hex() for vertex in vertices)
    return f"{OBSERVATION_PREFIX}{named}~{uuid.uuid4().hex}"


def observed_vertices(plan_node: str) -> frozenset[str]:
    """The vertices an SQL plan node's text names (``observation_name``), if any."""
    found = _NAMED.match(plan_node)
    if found is None:
        return frozenset()
    vertices = set()
    for named in found.group(1).split("."):
        try:
            vertex = bytes.fromhex(named).decode()
        except ValueError:
            continue
        if vertex:
            vertices.add(vertex)
    return frozenset(vertices)


@contextmanager
def vertex_actions(context: SparkContext, vertex: str) -> Iterator[None]:
    """Spark actions run inside carry ``vertex`` after the job's description (none set: as
    they were)."""
    described = context.getLocalProperty(_DESCRIPTION)
    if described is None:
        yield
        return
    context.setLocalProperty(_DESCRIPTION, f"{described}{VERTEX_MARK}{vertex}")
    try:
        yield
    finally:
        context.setLocalProperty(_DESCRIPTION, described)


def described_vertex(description: str, job_description: str) -> tuple[bool, str | None]:
    """Whether a query's ``description`` is the job's, and the vertex that ran it (if any)."""
    if description == job_description:
        return True, None
    if description.startswith(job_description + VERTEX_MARK):
        return True, description[len(job_description) + len(VERTEX_MARK) :]
    return False, None
