"""`regrapht graph`: build, inspect and export the reasoning graph.

    regrapht graph build TRAJECTORIES.jsonl... -o OUT [--json-out F] [--relabel [--model PATH]]
    regrapht graph distill TASKDIR... -o OUT.jsonl [--strategy S] [--budget N] [--seeds S...] [--no-model]
                           [--time-limit SECONDS]
    regrapht graph stats [--graph PATH] [--json]
    regrapht graph show TECHNIQUE [--graph PATH] [--json]
    regrapht graph export (--dot | --json | --svg) [--graph PATH] [-o F]

Without --graph the bundled graph is used. Bad input (unreadable file, bad trajectory line,
unknown technique) raises InputError: exit 2 with a one-line message naming file and line.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from regrapht.commands.cluster_args import add_cluster_arguments, cluster_settings_of
from regrapht.errors import InputError
from regrapht.graph.build import build_graph, read_trajectories
from regrapht.graph.canon import Canonicaliser
from regrapht.graph.dot import to_dot
from regrapht.graph.graph import ReasoningGraph
from regrapht.graph.store import dumps_json, load_bundled_graph, load_graph, save_graph
from regrapht.graph.svg import to_svg
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

    distill = commands.add_parser(
        "distill", help="run the search on a GPU over corpus train tasks and write the verified steps as trajectories")
    distill.add_argument("tasks", nargs="+", type=Path, metavar="TASKDIR",
                         help="task directories of a corpus train split (.cu + .regrapht.toml)")
    distill.add_argument("-o", "--out", type=Path, required=True, help="trajectories file to write (JSON Lines)")
    distill.add_argument("--strategy", default="mcgs", help="search strategy (default: mcgs)")
    distill.add_argument("--budget", type=int, default=24, help="candidates per kernel and seed (default: 24)")
    distill.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="search seeds (default: 0 1 2)")
    distill.add_argument("--graph", type=Path, help="graph that guides the search (default: the bundled one)")
    distill.add_argument("--model", help="GGUF model file (default: $REGRAPHT_MODEL, else the embedded one)")
    distill.add_argument("--no-model", action="store_true", help="appliers only")
    distill.add_argument("--model-threads", type=int, default=0)
    distill.add_argument("--arch", help="target arch (default: the device's)")
    distill.add_argument("--time-limit", type=float, metavar="SECONDS",
                         help="per search: stop after this long and keep what was verified")
    add_cluster_arguments(distill)
    distill.set_defaults(handler=run_distill)

    stats = commands.add_parser("stats", help="summary of the reasoning graph")
    stats.add_argument("--graph", type=Path, help="graph file (default: the bundled one)")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(handler=run_stats)

    show = commands.add_parser("show", help="one technique: description and its edges")
    show.add_argument("technique")
    show.add_argument("--graph", type=Path, help="graph file (default: the bundled one)")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=run_show)

    export = commands.add_parser("export", help="the whole graph as Graphviz DOT, JSON or an SVG picture")
    kind = export.add_mutually_exclusive_group(required=True)
    kind.add_argument("--dot", action="store_true")
    kind.add_argument("--json", action="store_true")
    kind.add_argument("--svg", action="store_true", help="a picture of the graph (graph/README.md shows one)")
    export.add_argument("--graph", type=Path, help="graph file (default: the bundled one)")
    export.add_argument("-o", "--out", type=Path, help="write here instead of stdout")
    export.set_defaults(handler=run_export)


def _graph(args: argparse.Namespace) -> ReasoningGraph:
    return load_bundled_graph() if args.graph is None else load_graph(args.graph)


def _relabel_model(args: argparse.Namespace) -> ModelBackend | None:
    if not args.relabel:
        return None
    # Imported here so that building without --relabel never touches the model engine.
    from regrapht.model import ModelSettings, ProcessModelBackend

    model = ProcessModelBackend(ModelSettings(path=args.model))
    _ = model.info  # a missing or corrupt file is an InputError before the build starts
    return model


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


def run_distill(args: argparse.Namespace) -> int:
    # Imported here: distilling needs the search, the GPU worker and maybe the model.
    import os

    from regrapht.app.optimize import ModelCache, ModelConfig, OptimizeOptions
    from regrapht.app.resources import GpuResources
    from regrapht.commands.optimize import load_model
    from regrapht.evaluation.distilling import distill_search
    from regrapht.evaluation.runner import load_task
    from regrapht.search import STRATEGIES
    from regrapht.search.distill import check_train_split, unique, write_jsonl

    if args.strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {args.strategy!r} (one of {', '.join(STRATEGIES)})")
    if args.budget < 1:
        raise InputError(f"--budget must be at least 1, got {args.budget}")
    for directory in args.tasks:
        check_train_split(directory)
    tasks = [load_task(directory) for directory in args.tasks]
    options = OptimizeOptions(model=ModelConfig(args.model, args.model_threads, 0), use_model=not args.no_model,
                              arch=args.arch, graph_path=args.graph, time_limit_s=args.time_limit)
    models = ModelCache()
    load_model(args, models, options.model)  # a bad model file is an error before any search
    if args.ray is not None:
        distilled = distill_on_ray(args, tasks, options)
        print(f"wrote {len(distilled)} trajectories to {args.out}")
        return 0 if distilled else 1
    records: list[dict[str, Any]] = []
    with GpuResources(os.environ, Path.home()) as resources:
        for task in tasks:
            for kernel in task.spec.kernels:
                for seed in args.seeds:
                    found, line = distill_search(task, kernel, strategy=args.strategy, budget=args.budget, seed=seed,
                                                 options=options, models=models, resources=resources)
                    records = unique([*records, *found])
                    # written after every search, so a run stopped by a time limit keeps what it found
                    write_jsonl(args.out, records)
                    print(line, file=sys.stderr, flush=True)
    print(f"wrote {len(records)} trajectories to {args.out}")
    return 0 if records else 1


def distill_on_ray(args: argparse.Namespace, tasks: list[Any], options: Any) -> list[dict[str, Any]]:
    """The searches of `run_distill` as Ray jobs (one per task, kernel and seed, one GPU each),
    kept in OUT.jobs/ (a re-run skips the finished ones); their trajectories merged into OUT."""
    from regrapht.cluster.jobs import Job
    from regrapht.cluster.ray_pool import run_on_ray
    from regrapht.cluster.store import ResultStore
    from regrapht.search.distill import unique, write_jsonl

    jobs = [Job("distill", directory, kernel.name, args.strategy, args.budget, seed, options)
            for directory, task in zip(args.tasks, tasks, strict=True)
            for kernel in task.spec.kernels for seed in args.seeds]
    store = ResultStore(args.out.with_name(args.out.name + ".jobs")).open()
    outcomes = run_on_ray(jobs, store, cluster_settings_of(args),
                          report=lambda line: print(line, file=sys.stderr, flush=True))
    records: list[dict[str, Any]] = []
    for outcome in outcomes:
        if outcome.result is not None:
            found = outcome.result.get("records")
            records = unique([*records, *(found if isinstance(found, list) else [])])
        else:
            print(f"{outcome.job.label}: cluster job failed: {outcome.reason}", file=sys.stderr)
    write_jsonl(args.out, records)
    return records


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
        print(speedup_distribution(summary.speedup_histogram))
    print("techniques: " + ", ".join(summary.techniques))
    return 0


def speedup_distribution(histogram: dict[str, int]) -> str:
    """The measured step speedups by range, one bar per range."""
    widest = max(histogram.values(), default=0) or 1
    lines = ["step speedups measured in the examples:"]
    for label, count in histogram.items():
        lines.append(f"  {label:>8}x {count:5d} {'#' * round(40 * count / widest)}")
    return "\n".join(lines)


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
    text = to_dot(graph) if args.dot else to_svg(graph) if args.svg else dumps_json(graph)
    if args.out is None:
        sys.stdout.write(text)
    else:
        try:
            args.out.write_text(text, encoding="utf-8")
        except OSError as error:
            raise InputError(f"cannot write: {error.strerror or error}", file=str(args.out)) from error
    return 0

