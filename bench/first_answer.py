"""Time to the first verified faster suggestion, per corpus kernel (issue 12, "fast first answer").

    python bench/first_answer.py run TASKDIR... --out ROWS.jsonl [--budget 24] [--limit 60] [--no-model]
    python bench/first_answer.py summary ROWS.jsonl... [--md OUT.md]

`run` does, per kernel, what the editor does on "Optimize kernel" with the default settings
(mcgs, budget 24, the model loaded once beforehand as a running server has it): open the run
(compile the original, start the GPU worker), measure the original, search, and notes when
progress first reports stage `found` (a verified faster candidate exists: the moment the editor can
show it). The search is stopped there (the rest of it is not what this measures) or at `--limit`
seconds. Each row: task, kernel, `first_s` (from the request to `found`; null if none within the
limit), `search_first_s` (from the search's start, `first_faster_s` of the optimize JSON),
the first candidate's technique path and speedup, and `outcome`: found, none (the search ended by
itself, budget spent or nothing left to try, without a faster version: this kernel gets no
suggestion at all) or limit (cut at `--limit` first). `summary` prints p50/p95 over the kernels
that get a suggestion at all: found ones, and ones cut at the limit counted as slower than every
other (they might have got one later), so p95 is honest about misses; kernels with none at all
are counted apart (there is nothing to wait for).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

from regrapht.errors import InputError


def run(args: argparse.Namespace) -> int:
    from regrapht.app.optimize import ModelCache, ModelConfig, OptimizeOptions, OptimizeRequest, run_optimize
    from regrapht.app.resources import GpuResources
    from regrapht.evaluation.runner import load_task
    from regrapht.inputs import read_source
    from regrapht.search import Progress

    options = OptimizeOptions(model=ModelConfig(args.model, args.model_threads, 0), use_model=not args.no_model)
    models = ModelCache()
    if not args.no_model:
        models.get(options.model)  # loaded before the first search: its load time is not counted
    with args.out.open("a", encoding="utf-8") as out, GpuResources(os.environ, Path.home()) as resources:
        for directory in args.tasks:
            task = load_task(directory)
            source, _warnings = read_source(task.source_path)  # size-limited, UTF-8 checked
            for kernel in task.spec.kernels:
                found: dict[str, object] = {}
                started = time.perf_counter()

                def progress(p: Progress, found: dict[str, object] = found, started: float = started) -> None:
                    if p.stage == "found" and "first_s" not in found:
                        found["first_s"] = round(time.perf_counter() - started, 3)
                        found["what"] = p.message

                def stop(found: dict[str, object] = found, started: float = started) -> bool:
                    return "first_s" in found or time.perf_counter() - started > args.limit

                try:
                    request = OptimizeRequest(kernel.name, source, task.source_path, task.spec, "mcgs", args.budget,
                                              0, options)
                    result = run_optimize(request, resources, models=models, progress=progress, cancel=stop).result
                    assert result is not None
                    # found: a suggestion; none: the search ended by itself (budget spent or nothing left
                    # to try) without one, so this kernel gets no suggestion at all; limit: cut at --limit
                    outcome = "found" if "first_s" in found else "limit" if result.cancelled else "none"
                    row = {"task": task.name, "kernel": kernel.name, "gpu": result.gpu, "first_s": found.get("first_s"),
                           "search_first_s": result.first_faster_s, "first": found.get("what"), "outcome": outcome,
                           "evaluated": result.counters.generated, "wall_s": round(time.perf_counter() - started, 3)}
                except InputError as error:
                    row = {"task": task.name, "kernel": kernel.name, "first_s": None, "error": str(error)}
                out.write(json.dumps(row) + "\n")
                out.flush()
                print(json.dumps(row), file=sys.stderr, flush=True)
    return 0


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of `values` (inf stands for a miss)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def outcome_of(row: dict[str, object]) -> str:
    """found / none (the whole search ended without a suggestion) / limit (cut at --limit) / error;
    rows written before `outcome` existed: found or limit."""
    if row.get("error"):
        return "error"
    if row.get("first_s") is not None:
        return "found"
    return str(row.get("outcome") or "limit")


def summary(args: argparse.Namespace) -> int:
    rows = [json.loads(line) for path in args.rows for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    if not rows:
        print("first_answer: no rows", file=sys.stderr)
        return 1
    outcomes = [outcome_of(r) for r in rows]
    # p50/p95 over the kernels that get a verified faster suggestion at all: those that got one, and
    # those cut at the limit (they might have got one later: they count as slower than every other)
    population = [float(r["first_s"]) if o == "found" else math.inf for r, o in zip(rows, outcomes, strict=True)
                  if o in ("found", "limit")]
    search_times = [float(r["search_first_s"]) for r in rows if r.get("search_first_s") is not None]
    found = outcomes.count("found")

    def shown(value: float) -> str:
        return "none (a kernel cut at the limit falls there)" if value == math.inf else f"{value:.1f} s"

    gpu = next((r["gpu"] for r in rows if r.get("gpu")), "none")
    lines = [f"time to the first verified faster suggestion, {len(rows)} kernels (GPU {gpu}): {found} got one, "
             f"{outcomes.count('none')} got none from the whole search (budget spent or nothing left to try: no "
             f"suggestion to wait for), {outcomes.count('limit')} were cut at the limit before one, "
             f"{outcomes.count('error')} failed"]
    if population:
        within = sum(1 for t in population if t <= 10)
        lines.append(f"- from the request, over the {len(population)} kernels that get a suggestion at all (found, "
                     f"or cut at the limit counted as slowest): p50 {shown(percentile(population, 50))}, "
                     f"p95 {shown(percentile(population, 95))}, within 10 s: {within} of {len(population)}")
    if search_times:
        lines.append(f"- from the search's start (original measured): p50 {percentile(search_times, 50):.1f} s, "
                     f"p95 {percentile(search_times, 95):.1f} s (kernels with a suggestion)")
    lines += ["", "| kernel | first suggestion (s) | what |", "|---|---|---|"]
    lines += [f"| {r['task']}/{r['kernel']} | {r.get('first_s') if r.get('first_s') is not None else '-'} "
              f"| {r.get('first') or r.get('error') or ('no faster version found by the whole search' if o == 'none' else 'none within the limit')} |"
              for r, o in zip(rows, outcomes, strict=True)]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.md is not None:
        args.md.write_text(text, encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    go = commands.add_parser("run")
    go.add_argument("tasks", nargs="+", type=Path)
    go.add_argument("--out", type=Path, required=True)
    go.add_argument("--budget", type=int, default=24)
    go.add_argument("--limit", type=float, default=60.0, help="s per kernel before giving up")
    go.add_argument("--model")
    go.add_argument("--model-threads", type=int, default=4)
    go.add_argument("--no-model", action="store_true")
    go.set_defaults(handler=run)
    summarise = commands.add_parser("summary")
    summarise.add_argument("rows", nargs="+", type=Path)
    summarise.add_argument("--md", type=Path)
    summarise.set_defaults(handler=summary)
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
