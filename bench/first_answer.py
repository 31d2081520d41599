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
the first candidate's technique path and speedup. `summary` prints p50/p95 over all kernels (a
kernel without a suggestion counts as slower than every other, so p95 is honest about misses).
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
                    row = {"task": task.name, "kernel": kernel.name, "gpu": result.gpu, "first_s": found.get("first_s"),
                           "search_first_s": result.first_faster_s, "first": found.get("what"),
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


def summary(args: argparse.Namespace) -> int:
    rows = [json.loads(line) for path in args.rows for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    if not rows:
        print("first_answer: no rows", file=sys.stderr)
        return 1
    times = [float(r["first_s"]) if r.get("first_s") is not None else math.inf for r in rows]
    search_times = [float(r["search_first_s"]) for r in rows if r.get("search_first_s") is not None]
    hits = sum(1 for t in times if t != math.inf)

    def shown(value: float) -> str:
        return "none (too many kernels got no suggestion)" if value == math.inf else f"{value:.1f} s"

    lines = [f"time to the first verified faster suggestion, {len(rows)} kernels "
             f"({hits} with one; GPU {next((r['gpu'] for r in rows if r.get('gpu')), 'none')})",
             f"- from the request: p50 {shown(percentile(times, 50))}, p95 {shown(percentile(times, 95))}, "
             f"within 10 s: {sum(1 for t in times if t <= 10)} of {len(rows)}"]
    if search_times:
        lines.append(f"- from the search's start (original measured): p50 {percentile(search_times, 50):.1f} s, "
                     f"p95 {percentile(search_times, 95):.1f} s (kernels with a suggestion)")
    lines += ["", "| kernel | first suggestion (s) | what |", "|---|---|---|"]
    lines += [f"| {r['task']}/{r['kernel']} | {r.get('first_s') if r.get('first_s') is not None else '-'} "
              f"| {r.get('first') or r.get('error') or 'none within the limit'} |" for r in rows]
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
