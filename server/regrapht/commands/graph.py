"""`regrapht graph`: build, inspect and export the reasoning graph.

    regrapht graph build TRAJECTORIES.jsonl... -o OUT [--json-out F] [--relabel [--model PATH]]
    regrapht graph stats [--graph PATH] [--json]
    regrapht graph show TECHNIQUE [--graph PATH] [--json]
    regrapht graph export (--dot | --json) [--graph PATH] [-o F]

Without --graph the bundled graph is used. Bad input (unreadable file, bad trajectory line,
unknown technique) raises InputError: exit 2 with a one-line message naming file and line.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from regrapht.errors import InputError
from regrapht.graph.build import build_graph, read_trajectories
from regrapht.graph.canon import Canonicaliser
from regrapht.graph.dot import to_dot
from regrapht.graph.graph import ReasoningGraph
from regrapht.graph.store import dumps_json, load_bundled_graph, load_graph, save_graph
from regrapht.model.backend import ModelBackend


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("graph", help="build, inspect and export the reasoning graph")
    commands = parser.add_subparsers(dest="graph_command", required=True, metavar="ACTION")

    build = commands.add_parser("build", help="build a graph from trajectory files (JSON Lines)")
    build.add_argument("trajectories", nargs="+", type=Path, metavar="TRAJECTORIES.jsonl")
    build.add_argument("-o", "--out", type=Path, required=True, help="the graph file to write (msgpack)")
    build.add_argument("--json-out", type=Path, help="also write the graph as readable JSON")
    build.add_argument("--relabel", action="store_true",
                       help="ask the local model to map unknown technique names onto existing ones")
    build.add_argument("--model", help="GGUF for --relabel (default: $REGRAPHT_MODEL, else the embedded one)")
    build.add_argument("--json", action="store_true", help="print the summary as JSON")
    build.set_defaults(handler=run_build)

    stats = commands.add_parser("stats", help="summary of the reasoning graph")
    stats.add_argument("--graph", type=Path, help="graph file (default: the bundled one)")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(handler=run_stats)

    show = commands.add_parser("show", help="one technique: description and its edges")
    show.add_argument("technique")
    show.add_argument("--graph", type=Path, help="graph file (default: the bundled one)")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=run_show)

    export = commands.add_parser("export", help="the whole graph as Graphviz DOT or JSON")
    kind = export.add_mutually_exclusive_group(required=True)
    kind.add_argument("--dot", action="store_true")
    kind.add_argument("--json", action="store_true")
    export.add_argument("--graph", type=Path, help="graph file (default: the bundled one)")
    export.add_argument("-o", "--out", type=Path, help="write here instead of stdout")
    export.set_defaults(handler=run_export)


def _graph(args: argparse.Namespace) -> ReasoningGraph:
    return load_bundled_graph() if args.graph is None else load_graph(args.graph)


def _relabel_model(args: argparse.Namespace) -> ModelBackend | None:
    if not args.relabel:
        return None
    # Imported here so that building without --relabel never touches the model engine.
    from regrapht.model.llama_backend import LlamaBackend, ModelSettings

    return LlamaBackend(ModelSettings(path=args.model))


def run_build(args: argparse.Namespace) -> int:
    trajectories = [t for path in args.trajectories for t in read_trajectories(path)]
    canon = Canonicaliser(model=_relabel_model(args))
    graph = build_graph(trajectories, canon)
    _write(graph, args.out)
    if args.json_out is not None:
        _write(graph, args.json_out if args.json_out.suffix == ".json" else args.json_out.with_suffix(".json"))
    summary = graph.summary()
    if args.json:
        print(json.dumps(summary.to_json()))
    else:
        print(f"{args.out}: {summary.vertices} vertices, {summary.edges} edges, "
              f"{summary.examples} examples from {summary.trajectories} trajectories")
        for asked, chosen in canon.relabels:
            print(f"  relabelled {asked} -> {chosen}")
    return 0


def _write(graph: ReasoningGraph, path: Path) -> None:
    try:
        save_graph(graph, path)
    except OSError as error:
        raise InputError(f"cannot write graph: {error.strerror or error}", file=str(path)) from error


def run_stats(args: argparse.Namespace) -> int:
    summary = _graph(args).summary()
    if args.json:
        print(json.dumps(summary.to_json()))
        return 0
    print(f"vertices: {summary.vertices} (incl. the start vertex)")
    print(f"edges: {summary.edges}")
    print(f"examples: {summary.examples}")
    print(f"trajectories: {summary.trajectories}")
    if summary.speedup_median is not None:
        print(f"recorded speedup: median {summary.speedup_median}x, max {summary.speedup_max}x")
    print("techniques: " + ", ".join(summary.techniques))
    return 0


def _edge_json(graph: ReasoningGraph, u: str, v: str) -> dict[str, Any]:
    stats = graph.edge_stats(u, v)
    return {
        "from": u, "to": v, "examples": len(graph.examples(u, v)),
        "kernels": sorted({e.kernel for e in graph.examples(u, v)}),
        "visits": stats.visits, "mean_reward": stats.mean_reward, "best_speedup": stats.best_speedup,
    }


def run_show(args: argparse.Namespace) -> int:
    graph = _graph(args)
    technique = Canonicaliser(known=set(graph.techniques())).canonical(args.technique)
    if not graph.has_technique(technique):
        raise InputError(
            f"unknown technique '{args.technique}' (known: {', '.join(graph.techniques())})",
            file=str(args.graph) if args.graph else None,
        )
    incoming = [_edge_json(graph, u, technique) for u in graph.predecessors(technique)]
    outgoing = [_edge_json(graph, technique, v) for v in graph.successors(technique)]
    if args.json:
        print(json.dumps({"technique": technique, "description": graph.description(technique),
                          "in": incoming, "out": outgoing}))
        return 0
    print(f"{technique}: {graph.description(technique)}")
    for title, edges, key in (("after", incoming, "from"), ("followed by", outgoing, "to")):
        print(f"{title}:")
        if not edges:
            print("  (none)")
        for edge in edges:
            best = ", ".join(f"{a} {s:.2f}x" for a, s in sorted(edge["best_speedup"].items()))
            print(f"  {edge[key]:<30} {edge['examples']} example(s)"
                  f"{'; best ' + best if best else ''}"
                  f"{'; ' + str(edge['visits']) + ' visits, mean reward ' + format(edge['mean_reward'], '.3f') if edge['visits'] else ''}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    graph = _graph(args)
    text = to_dot(graph) if args.dot else dumps_json(graph)
    if args.out is None:
        sys.stdout.write(text)
    else:
        try:
            args.out.write_text(text, encoding="utf-8")
        except OSError as error:
            raise InputError(f"cannot write: {error.strerror or error}", file=str(args.out)) from error
    return 0

