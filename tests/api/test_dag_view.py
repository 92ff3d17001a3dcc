"""``GET /v1/jobs/{id}/dag``: the plan as JSON and as SVG, with user names escaped."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from typing import Any

import httpx

SVG = "{http://www.w3.org/2000/svg}"


def test_dag_view_lists_vertices_with_stages_and_labels_edges_by_routing(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    job_id = http.post("/v1/jobs", json=word_count).json()["id"]
    response = http.get(f"/v1/jobs/{job_id}/dag")
    assert response.status_code == 200, response.text
    view = response.json()
    assert [v["name"] for v in view["vertices"]] == [
        "lines", "tokenize", "accumulate", "combine", "sink"
    ]  # fmt: skip
    labels = {(e["from"], e["to"]): e["label"] for e in view["edges"]}
    assert labels[("tokenize", "accumulate")] == "partitioned(word)"
    assert labels[("accumulate", "combine")] == "partitioned(key) distributed"
    fused = {(e["from"], e["to"]) for e in view["edges"] if e["exchange"] == "fused"}
    assert ("lines", "tokenize") in fused
    tokenize = next(v for v in view["vertices"] if v["name"] == "tokenize")
    assert tokenize["parallelism"] == 2 * view["members"]


def test_dag_svg_draws_every_vertex_and_edge_and_escapes_names(
    http: httpx.Client, word_count: dict[str, Any]
) -> None:
    body = copy.deepcopy(word_count)
    hostile = '<script>alert("x")</script>&'
    renames = {"sink": hostile}
    for vertex in body["dag"]["vertices"]:
        vertex["name"] = renames.get(vertex["name"], vertex["name"])
    for edge in body["dag"]["edges"]:
        edge["to"] = renames.get(edge["to"], edge["to"])
    job_id = http.post("/v1/jobs", json=body).json()["id"]
    by_query = http.get(f"/v1/jobs/{job_id}/dag", params={"format": "svg"})
    by_accept = http.get(f"/v1/jobs/{job_id}/dag", headers={"Accept": "image/svg+xml"})
    assert by_query.headers["content-type"] == "image/svg+xml"
    assert by_query.text == by_accept.text
    assert "<script" not in by_query.text
    root = ET.fromstring(by_query.text)  # well-formed: the name was escaped
    vertices = [g.get("data-vertex") for g in root.iter(f"{SVG}g") if g.get("class") == "vertex"]
    edges = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"]
    assert sorted(v or "" for v in vertices) == sorted(v["name"] for v in body["dag"]["vertices"])
    assert len(edges) == len(body["dag"]["edges"])
