"""An SVG picture of a reasoning graph, laid out here (no Graphviz needed; deterministic bytes).

Vertices go in columns by their distance from START (breadth-first; a technique first reached
after k steps is in column k), sorted by name within a column. An edge is a curve from its
source's right side to its target's left side (within a column: bulging into the gap on its
right; back to an earlier column: looping below); its width grows with the number of examples and its colour with the
best measured speedup (grey: none measured). `regrapht graph export --svg` writes it.
"""

from __future__ import annotations

import math
from collections import deque
from html import escape

from regrapht.graph.graph import ReasoningGraph
from regrapht.graph.types import START

_BOX_W, _BOX_H = 210, 30
_COL_GAP, _ROW_GAP = 120, 22
_MARGIN = 40


def _columns(graph: ReasoningGraph) -> list[list[str]]:
    depth = {START: 0}
    queue = deque([START])
    while queue:
        vertex = queue.popleft()
        for successor in graph.successors(vertex):
            if successor not in depth:
                depth[successor] = depth[vertex] + 1
                queue.append(successor)
    unreachable = max(depth.values(), default=0) + 1
    for technique in graph.techniques():
        depth.setdefault(technique, unreachable)
    columns: list[list[str]] = [[] for _ in range(max(depth.values()) + 1)]
    for vertex, d in depth.items():
        columns[d].append(vertex)
    return [sorted(column) for column in columns if column]


def _colour(speedup: float | None) -> str:
    if speedup is None:
        return "#9a9a9a"
    # 1x -> light blue, 10x and more -> dark green, on a log scale
    t = max(0.0, min(1.0, math.log10(max(speedup, 1.0))))
    r, g, b = (int(a + (z - a) * t) for a, z in ((120, 20), (170, 120), (220, 60)))
    return f"#{r:02x}{g:02x}{b:02x}"


def to_svg(graph: ReasoningGraph) -> str:
    columns = _columns(graph)
    tallest = max(len(c) for c in columns)
    height = 2 * _MARGIN + tallest * (_BOX_H + _ROW_GAP) + 60
    width = 2 * _MARGIN + len(columns) * (_BOX_W + _COL_GAP)
    place: dict[str, tuple[float, float]] = {}
    for i, column in enumerate(columns):
        top = _MARGIN + 30 + (tallest - len(column)) * (_BOX_H + _ROW_GAP) / 2
        for j, vertex in enumerate(column):
            place[vertex] = (_MARGIN + i * (_BOX_W + _COL_GAP), top + j * (_BOX_H + _ROW_GAP))
    column_of = {v: i for i, c in enumerate(columns) for v in c}
    summary = graph.summary()
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" '
        'markerUnits="userSpaceOnUse" orient="auto"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{_MARGIN}" y="{_MARGIN}" font-size="14">Reasoning graph: {summary.vertices - 1} techniques, '
        f'{summary.edges} edges, {summary.examples} examples from {summary.trajectories} trajectories; '
        'edge width: examples, colour: best measured speedup (grey: none)</text>',
    ]
    for u, v in graph.edges():
        examples = graph.examples(u, v)
        speedups = [e.speedup for e in examples if e.speedup is not None]
        best = max(speedups) if speedups else None
        stroke = 1.0 + 1.5 * math.log2(len(examples))
        (ux, uy), (vx, vy) = place[u], place[v]
        y1, y2 = uy + _BOX_H / 2, vy + _BOX_H / 2
        if column_of[v] > column_of[u]:
            x1, x2 = ux + _BOX_W, vx
            bend = (x2 - x1) / 2
            path = f"M {x1:.1f} {y1:.1f} C {x1 + bend:.1f} {y1:.1f}, {x2 - bend:.1f} {y2:.1f}, {x2:.1f} {y2:.1f}"
        elif column_of[v] == column_of[u]:  # within a column: bulge into the gap on its right
            x1 = x2 = ux + _BOX_W
            bulge = 25 + abs(y2 - y1) / 5
            path = f"M {x1:.1f} {y1:.1f} C {x1 + bulge:.1f} {y1:.1f}, {x2 + bulge:.1f} {y2:.1f}, {x2:.1f} {y2:.1f}"
        else:  # back to an earlier column: leave from the bottom, arrive at the bottom
            x1, x2 = ux + _BOX_W / 2 + 20, vx + _BOX_W / 2 - 20
            y1, y2 = uy + _BOX_H, vy + _BOX_H
            drop = 40 + abs(x1 - x2) / 6
            path = f"M {x1:.1f} {y1:.1f} C {x1:.1f} {y1 + drop:.1f}, {x2:.1f} {y2 + drop:.1f}, {x2:.1f} {y2:.1f}"
        title = f"{u} -> {v}: {len(examples)} examples" + (f", best {best:.2f}x" if best is not None else "")
        parts.append(f'<path d="{path}" fill="none" stroke="{_colour(best)}" stroke-width="{stroke:.1f}" '
                     f'stroke-opacity="0.75" marker-end="url(#arrow)"><title>{escape(title)}</title></path>')
    for vertex, (x, y) in sorted(place.items()):
        label = "start (unoptimized kernel)" if vertex == START else vertex
        fill = "#fff4d6" if vertex == START else "#eef3fb"
        tip = graph.description(vertex) if vertex != START else "the unoptimized kernel"
        parts.append(f'<g><title>{escape(tip)}</title><rect x="{x:.1f}" y="{y:.1f}" width="{_BOX_W}" '
                     f'height="{_BOX_H}" rx="6" fill="{fill}" stroke="#445"/>'
                     f'<text x="{x + _BOX_W / 2:.1f}" y="{y + _BOX_H / 2 + 4:.1f}" text-anchor="middle">'
                     f'{escape(label)}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
