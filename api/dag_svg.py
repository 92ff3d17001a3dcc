"""Draw a job's execution plan as a standalone SVG (``GET /v1/jobs/{id}/dag?format=svg``).

Vertices are laid out in layers by their longest path from a source (the plan's order is
topological), each layer ordered by the mean position of its upstream vertices so edges
cross little. Every user-supplied name is XML-escaped. Each vertex carries
``data-vertex`` so a page can colour it by backpressure level.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from api.schemas import DagView

BOX_W, BOX_H = 170, 54
GAP_X, GAP_Y = 90, 36
MARGIN = 24


@dataclass(frozen=True)
class Box:
    x: float
    y: float


def _layers(view: DagView) -> list[list[str]]:
    depth: dict[str, int] = {}
    upstream: dict[str, list[str]] = {v.name: [] for v in view.vertices}
    for edge in view.edges:
        upstream[edge.to].append(edge.source)
    for vertex in view.vertices:  # topological order
        depth[vertex.name] = max((depth[u] + 1 for u in upstream[vertex.name]), default=0)
    layers: list[list[str]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for vertex in view.vertices:
        layers[depth[vertex.name]].append(vertex.name)
    rank: dict[str, float] = {}
    for layer in layers:
        layer.sort(
            key=lambda name: (
                sum(rank[u] for u in upstream[name]) / len(upstream[name])
                if upstream[name]
                else 0.0
            )
        )
        rank.update({name: float(i) for i, name in enumerate(layer)})
    return layers


def _positions(layers: list[list[str]]) -> tuple[dict[str, Box], float, float]:
    tallest = max((len(layer) for layer in layers), default=0)
    height = 2 * MARGIN + tallest * BOX_H + max(tallest - 1, 0) * GAP_Y
    boxes: dict[str, Box] = {}
    for column, layer in enumerate(layers):
        used = len(layer) * BOX_H + max(len(layer) - 1, 0) * GAP_Y
        top = (height - used) / 2
        for row, name in enumerate(layer):
            boxes[name] = Box(MARGIN + column * (BOX_W + GAP_X), top + row * (BOX_H + GAP_Y))
    width = 2 * MARGIN + len(layers) * BOX_W + max(len(layers) - 1, 0) * GAP_X
    return boxes, width, height


def render_svg(view: DagView) -> str:
    """The plan as SVG text; vertices labelled name / processor x parallelism."""
    boxes, width, height = _positions(_layers(view))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="12">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
    ]
    for edge in view.edges:
        a, b = boxes[edge.source], boxes[edge.to]
        x1, y1, x2, y2 = a.x + BOX_W, a.y + BOX_H / 2, b.x, b.y + BOX_H / 2
        bend = (x2 - x1) / 2
        dash = ' stroke-dasharray="5,3"' if edge.exchange == "fused" else ""
        parts.append(
            f'<g class="edge" data-from="{escape(edge.source)}" data-to="{escape(edge.to)}">'
            f'<path d="M{x1:.1f},{y1:.1f} C{x1 + bend:.1f},{y1:.1f} {x2 - bend:.1f},{y2:.1f} '
            f'{x2:.1f},{y2:.1f}" fill="none" stroke="#555"{dash} marker-end="url(#arrow)"/>'
            f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 - 5:.1f}" text-anchor="middle" '
            f'fill="#333">{escape(edge.label)}</text></g>'
        )
    for vertex in view.vertices:
        box = boxes[vertex.name]
        parts.append(
            f'<g class="vertex" data-vertex="{escape(vertex.name)}">'
            f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{BOX_W}" height="{BOX_H}" rx="6" '
            'fill="#eef3fb" stroke="#35618f"/>'
            f'<text x="{box.x + BOX_W / 2:.1f}" y="{box.y + 22:.1f}" text-anchor="middle" '
            f'font-weight="bold">{escape(vertex.name)}</text>'
            f'<text x="{box.x + BOX_W / 2:.1f}" y="{box.y + 40:.1f}" text-anchor="middle" '
            f'fill="#555">{escape(vertex.processor)} &#215;{vertex.parallelism}</text></g>'
        )
    parts.append("</svg>")
    return "\n".join(parts)
