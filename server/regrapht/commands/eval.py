"""`regrapht eval TASKDIR... --strategy S [--budget N] [--model PATH] [--seed S] --out DIR`.

Runs `optimize` on every kernel of every task directory, re-checks each final answer with a
fresh evaluator, and writes DIR/report.json (`tasks` + `totals`), DIR/report.md and
DIR/speedups.svg. Exit 0 when every task ran and every re-check of an answer passed; 1 when a
task failed to run or a re-check failed; 2 bad input.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from regrapht.app.optimize import ModelCache, ModelConfig, OptimizeOptions
from regrapht.app.resources import GpuResources
from regrapht.commands.cluster_args import add_cluster_arguments, cluster_settings_of
from regrapht.commands.compiling import add_compile_arguments, compile_setup_of
from regrapht.commands.optimize import load_model
from regrapht.errors import InputError
from regrapht.evaluation.report import markdown, svg_chart, totals
from regrapht.evaluation.runner import Task, eval_row, load_task, measured_peaks, not_run_row, row_failed
from regrapht.limits import DEFAULT_SEARCH_BUDGET, SEARCH_STRATEGIES
from regrapht.search.options import SearchOptions


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("eval", help="optimize a suite of task directories and report")
    parser.add_argument("tasks", nargs="+", help="task directories (.cu + .regrapht.toml)")
    parser.add_argument("--strategy", required=True, choices=SEARCH_STRATEGIES)
    parser.add_argument("--budget", type=int, default=DEFAULT_SEARCH_BUDGET)
    parser.add_argument("--model", help="GGUF model file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--model-threads", type=int, default=0)
    parser.add_argument("--model-gpu-layers", type=int, default=0)
    parser.add_argument("--no-model", action="store_true", help="appliers only, even for mcgs/random/greedy")
    parser.add_argument("--no-fast-math", action="store_true",
                        help="leave techniques that approximate (fast-math intrinsics, float for double) out")
    parser.add_argument("--no-sanitize", action="store_true",
                        help="offer the answer without running it under compute-sanitizer first")
    parser.add_argument("--time-limit", type=float, metavar="SECONDS",
                        help="per kernel: stop its search after this long and keep the best verified so far")
    add_compile_arguments(parser)
    add_cluster_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: Any) -> int:
    tasks = [load_task(Path(t)) for t in args.tasks]
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"cannot create the output directory: {error.strerror}", file=str(out)) from error
    options = OptimizeOptions(model=ModelConfig(args.model, args.model_threads, args.model_gpu_layers),
                              use_model=not args.no_model, time_limit_s=args.time_limit,
                              search=SearchOptions(allow_approximations=not args.no_fast_math),
                              compile=compile_setup_of(args), sanitize=not args.no_sanitize)
    models = ModelCache()  # one model for every task
    load_model(args, models, options.model)  # before the first task (a bad file: exit 2)
    if args.ray is not None:
        rows, failed = run_tasks_on_ray(args, [Path(t) for t in args.tasks], tasks, out, options)
    else:
        with GpuResources(os.environ, Path.home()) as resources:
            rows, failed = run_tasks(args, tasks, out, options, models, resources)
    write_report(out, args, rows)
    print(f"wrote {out / 'report.json'}, {out / 'report.md'}, {out / 'speedups.svg'}")
    return 1 if failed else 0


def run_tasks(args: Any, tasks: list[Task], out: Path, options: OptimizeOptions, models: ModelCache,
              resources: GpuResources) -> tuple[list[dict[str, object]], bool]:
    rows: list[dict[str, object]] = []
    failed = False
    for task in tasks:
        for kernel in task.spec.kernels:
            row, kernel_failed = eval_row(task, kernel, strategy=args.strategy, budget=args.budget, seed=args.seed,
                                          options=options, models=models, resources=resources, peaks=measured_peaks)
            failed = failed or kernel_failed
            rows.append(row)
            # Written after every task, so a run stopped by a time limit keeps what it finished.
            write_report(out, args, rows)
            print(f"{task.name}/{kernel.name}: {task_line(row)}", file=sys.stderr, flush=True)
    return rows, failed


def run_tasks_on_ray(args: Any, folders: list[Path], tasks: list[Task], out: Path,
                     options: OptimizeOptions) -> tuple[list[dict[str, object]], bool]:
    """`run_tasks` as Ray jobs, one per kernel on one GPU each; the results are kept in
    OUT/jobs/ (a re-run skips the finished ones) and merged into the same report."""
    from regrapht.cluster.jobs import Job
    from regrapht.cluster.ray_pool import run_on_ray
    from regrapht.cluster.store import ResultStore

    settings = cluster_settings_of(args)
    jobs = [Job("eval", folder, kernel.name, args.strategy, args.budget, args.seed, options)
            for folder, task in zip(folders, tasks, strict=True) for kernel in task.spec.kernels]
    by_folder = dict(zip(folders, tasks, strict=True))
    outcomes = run_on_ray(jobs, ResultStore(out / "jobs").open(), settings,
                          report=lambda line: print(line, file=sys.stderr, flush=True))
    rows = [outcome.result if outcome.result is not None
            else not_run_row(by_folder[outcome.job.task], outcome.job.kernel, f"cluster job failed: {outcome.reason}")
            for outcome in outcomes]
    write_report(out, args, rows)
    return rows, any(row_failed(row) for row in rows)


def write_report(out: Path, args: Any, rows: list[dict[str, object]]) -> None:
    first = next((r for r in rows if r.get("gpu")), rows[0] if rows else {})
    report = {
        "strategy": args.strategy, "budget": args.budget, "seed": args.seed,
        "no_model": args.no_model, "time_limit_s": args.time_limit,
        "gpu": first.get("gpu"), "model": first.get("model"), "model_device": first.get("model_device"),
        "tasks": rows, "totals": totals(rows),
    }
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (out / "report.md").write_text(markdown(report), encoding="utf-8")
    (out / "speedups.svg").write_text(svg_chart(rows), encoding="utf-8")


def task_line(row: dict[str, object]) -> str:
    best = row.get("best")
    if isinstance(best, dict):
        return f"{float(best['speedup']):.2f}x verified ({', '.join(map(str, best.get('techniques', [])))})"
    return str(row.get("error") or row.get("reason") or "no faster verified version")
