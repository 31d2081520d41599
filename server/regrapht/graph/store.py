"""Reading and writing a `ReasoningGraph`: compact msgpack (the bundled file) and readable JSON.

Both hold the same versioned document:
    {"format": "regrapht-reasoning-graph", "version": 1, "start": "__start__", "trajectories": N,
     "vertices": [{"name", "description"}],
     "edges": [{"from", "to", "stats": {"visits", "mean_reward", "best_speedup"}, "examples": [...]}]}
written in sorted order so that rebuilding from the same trajectories gives the same bytes.
A file that is not such a document is an InputError naming the file.
`load_bundled_graph` reads the graph shipped inside the package (regrapht/data/).
"""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path
from typing import Any

import msgpack

from regrapht.errors import InputError
from regrapht.graph.graph import ReasoningGraph
from regrapht.graph.overlay import atomic_write_bytes, check_header, load_overlay_or_set_aside
from regrapht.graph.types import START, EdgeStats, Example
from regrapht.inputs import MAX_GRAPH_BYTES, read_bytes_bounded

GRAPH_FORMAT = "regrapht-reasoning-graph"
GRAPH_VERSION = 1
BUNDLED_NAME = "reasoning-graph.msgpack"

_EXAMPLE_FIELDS = ("kernel", "rationale", "description", "code_before", "code_after", "speedup", "arch")


def _stats_document(stats: EdgeStats) -> dict[str, Any]:
    return {
        "visits": stats.visits,
        "mean_reward": stats.mean_reward,
        "best_speedup": dict(sorted(stats.best_speedup.items())),
    }


def to_document(graph: ReasoningGraph) -> dict[str, Any]:
    return {
        "format": GRAPH_FORMAT,
        "version": GRAPH_VERSION,
        "start": START,
        "trajectories": graph.trajectories,
        "vertices": [
            {"name": name, "description": graph.description(name)} for name in [START, *graph.techniques()]
        ],
        "edges": [
            {
                "from": u,
                "to": v,
                "stats": _stats_document(graph.prior_stats(u, v)),
                "examples": [
                    {f: getattr(e, f) for f in _EXAMPLE_FIELDS if getattr(e, f) is not None}
                    | ({"features": list(e.features)} if e.features else {})
                    for e in graph.examples(u, v)
                ],
            }
            for u, v in graph.edges()
        ],
    }


def from_document(document: object, shown: str) -> ReasoningGraph:
    """Build a graph from a decoded document; InputError (naming `shown`) if malformed."""
    document = check_header(document, GRAPH_FORMAT, GRAPH_VERSION, "reasoning graph", shown)
    if document.get("start") != START:
        raise InputError(f"reasoning graph's initial vertex is not {START!r}", file=shown, key="start")
    trajectories = document.get("trajectories", 0)
    vertices = document.get("vertices")
    edges = document.get("edges")
    if not isinstance(trajectories, int) or not isinstance(vertices, list) or not isinstance(edges, list):
        raise InputError("corrupt reasoning graph (bad top-level fields)", file=shown)
    graph = ReasoningGraph(trajectories=trajectories)
    for index, vertex in enumerate(vertices):
        if not (isinstance(vertex, dict) and isinstance(vertex.get("name"), str)
                and isinstance(vertex.get("description", ""), str)):
            raise InputError("corrupt reasoning graph vertex", file=shown, key=f"vertices[{index}]")
        graph.add_technique(vertex["name"], vertex.get("description", ""))
    for index, edge in enumerate(edges):
        key = f"edges[{index}]"
        if not (isinstance(edge, dict) and isinstance(edge.get("from"), str) and isinstance(edge.get("to"), str)
                and isinstance(edge.get("examples"), list)):
            raise InputError("corrupt reasoning graph edge", file=shown, key=key)
        u, v = edge["from"], edge["to"]
        if u not in graph.digraph or v not in graph.digraph:
            raise InputError(f"edge {u} -> {v} names an unknown vertex", file=shown, key=key)
        for number, raw in enumerate(edge["examples"]):
            graph.add_example(u, v, _example(raw, shown, f"{key}.examples[{number}]"))
        if not graph.has_edge(u, v):
            raise InputError(f"edge {u} -> {v} has no examples", file=shown, key=key)
        graph.set_prior_stats(u, v, _stats(edge.get("stats", {}), shown, f"{key}.stats"))
    return graph


def _example(raw: object, shown: str, key: str) -> Example:
    if not isinstance(raw, dict):
        raise InputError("corrupt example", file=shown, key=key)
    texts = {f: raw.get(f, "") for f in _EXAMPLE_FIELDS[:5]}
    speedup = raw.get("speedup")
    arch = raw.get("arch")
    features = raw.get("features", [])
    if (not all(isinstance(t, str) for t in texts.values())
            or not (speedup is None or isinstance(speedup, int | float))
            or not (arch is None or isinstance(arch, str))
            or not (isinstance(features, list) and all(isinstance(f, str) for f in features))):
        raise InputError("corrupt example", file=shown, key=key)
    return Example(**texts, speedup=None if speedup is None else float(speedup), arch=arch, features=tuple(features))


def _stats(raw: object, shown: str, key: str) -> EdgeStats:
    if not isinstance(raw, dict):
        raise InputError("corrupt edge statistics", file=shown, key=key)
    visits = raw.get("visits", 0)
    mean = raw.get("mean_reward", 0.0)
    best = raw.get("best_speedup", {})
    if (not isinstance(visits, int) or not isinstance(mean, int | float) or not isinstance(best, dict)
            or not all(isinstance(k, str) and isinstance(x, int | float) for k, x in best.items())):
        raise InputError("corrupt edge statistics", file=shown, key=key)
    return EdgeStats(visits, float(mean), {k: float(x) for k, x in best.items()})


def dumps_msgpack(graph: ReasoningGraph) -> bytes:
    return bytes(msgpack.packb(to_document(graph), use_bin_type=True))


def dumps_json(graph: ReasoningGraph) -> str:
    return json.dumps(to_document(graph), indent=1, ensure_ascii=False) + "\n"


def save_graph(graph: ReasoningGraph, path: Path) -> None:
    """Write `graph` atomically: JSON if `path` ends in .json, else msgpack."""
    if path.suffix == ".json":
        atomic_write_bytes(path, dumps_json(graph).encode("utf-8"))
    else:
        atomic_write_bytes(path, dumps_msgpack(graph))


def loads_graph(data: bytes, shown: str) -> ReasoningGraph:
    """Decode a graph file's bytes (JSON or msgpack, told apart by the first byte)."""
    if data.lstrip()[:1] == b"{":
        try:
            document = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise InputError(f"corrupt reasoning graph JSON ({error})", file=shown) from error
    else:
        try:
            document = msgpack.unpackb(data, raw=False, strict_map_key=False)
        except (ValueError, TypeError, msgpack.UnpackException) as error:  # TypeError: a list as a map key
            raise InputError(f"corrupt reasoning graph file ({error or 'empty file'})", file=shown) from error
    return from_document(document, shown)


def load_graph(path: Path) -> ReasoningGraph:
    shown = str(path)
    return loads_graph(read_bytes_bounded(path, MAX_GRAPH_BYTES, "reasoning graph"), shown)


def load_bundled_graph() -> ReasoningGraph:
    """The reasoning graph shipped with the package (regrapht/data/reasoning-graph.msgpack)."""
    resource = importlib.resources.files("regrapht") / "data" / BUNDLED_NAME
    shown = f"regrapht/data/{BUNDLED_NAME}"
    if not resource.is_file():
        raise InputError("bundled reasoning graph is missing from the installation", file=shown)
    return loads_graph(resource.read_bytes(), shown)


def open_graph(path: Path | None = None, overlay_path: Path | None = None) -> ReasoningGraph:
    """The graph at `path` (the bundled one if None) with the overlay at `overlay_path` merged."""
    graph = load_bundled_graph() if path is None else load_graph(path)
    if overlay_path is not None:
        graph.apply_overlay(load_overlay_or_set_aside(overlay_path))
    return graph
