"""Graphviz DOT text of a reasoning graph (written by hand: no pydot dependency)."""

from __future__ import annotations

from regrapht.graph.graph import ReasoningGraph
from regrapht.graph.types import START


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(graph: ReasoningGraph) -> str:
    lines = ["digraph reasoning_graph {", "  rankdir=LR;", f"  {_quote(START)} [shape=doublecircle];"]
    for technique in graph.techniques():
        lines.append(f"  {_quote(technique)} [shape=box, tooltip={_quote(graph.description(technique))}];")
    for u, v in graph.edges():
        stats = graph.edge_stats(u, v)
        label = f"{len(graph.examples(u, v))} ex"
        if stats.best_speedup:
            label += f", best {max(stats.best_speedup.values()):.2f}x"
        if stats.visits:
            label += f", {stats.visits} visits"
        lines.append(f"  {_quote(u)} -> {_quote(v)} [label={_quote(label)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
