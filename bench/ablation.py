"""The search ablation on one corpus task: every configuration and seed, one process.

    python bench/ablation.py TASKDIR --out DIR [--configs mcgs:12 rules:6 mcgs:12:no-model ...]
        [--seeds 0 1 2] [--time-limit S] [--model-time-limit S] [--model PATH] [--model-threads N]

A configuration is STRATEGY:BUDGET, optionally :no-model. Each (configuration, seed) runs
`regrapht eval`'s per-kernel step (search with the given budget, a fresh re-check of the answer,
the roofline fraction) and writes DIR/<config>-s<seed>-<task>-<kernel>.json: the eval row plus
`config`, `no_model` and `time_limit_s`. One process per task loads the model once for all the
model configurations, and the nvcc cache of the GPU's cache dir is shared by every configuration,
so a candidate two strategies both produce is compiled once (each still pays its budget for it).
Each (configuration, seed) has its own graph-overlay directory: no run learns from another, every
search starts from the bundled graph. `--time-limit` (appliers-only configurations) and
`--model-time-limit` (configurations that ask the model) bound each search; a search that hits
its limit keeps its best verified version and its row says `time_limited`. `rules` uses no
randomness, so it runs once per kernel and its row is copied for the other seeds
(`copied_from_seed`).
`bench/merge_ablation.py DIR` prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from regrapht.app.optimize import MODEL_STRATEGIES, ModelCache, ModelConfig, OptimizeOptions
from regrapht.app.resources import GpuResources
from regrapht.errors import InputError
from regrapht.evaluation.runner import load_task, measured_peaks, run_task_kernel
from regrapht.search import STRATEGIES

DEFAULT_CONFIGS = ("mcgs:12", "greedy:12", "random:12", "rules:12", "cot:12", "mcgs:12:no-model",
                   "mcgs:6", "rules:6", "mcgs:24", "rules:24")

# Strategies that use no randomness: one run per (configuration, kernel) stands for every seed.
DETERMINISTIC = frozenset({"rules"})


def parse_config(text: str) -> tuple[str, int, bool]:
    parts = text.split(":")
    if len(parts) not in (2, 3) or parts[0] not in STRATEGIES or not parts[1].isdigit() or (
            len(parts) == 3 and parts[2] != "no-model"):
        raise InputError(f"bad configuration {text!r}: STRATEGY:BUDGET[:no-model], strategy one of "
                         f"{', '.join(STRATEGIES)}")
    return parts[0], int(parts[1]), len(parts) == 3


def label(strategy: str, budget: int, no_model: bool) -> str:
    return f"{strategy}{'-nomodel' if no_model else ''}-b{budget}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--configs", nargs="+", default=list(DEFAULT_CONFIGS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--time-limit", type=float, default=30.0, help="s per search without the model")
    parser.add_argument("--model-time-limit", type=float, default=25.0, help="s per search with the model")
    parser.add_argument("--model")
    parser.add_argument("--model-threads", type=int, default=4)
    args = parser.parse_args(argv)
    try:
        configs = [parse_config(c) for c in args.configs]
        task = load_task(args.task)
    except InputError as error:
        print(f"ablation: error: {error}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    model = ModelConfig(args.model, args.model_threads, 0)
    models = ModelCache()  # one model process for every search
    if any(s in MODEL_STRATEGIES and not no_model for s, _, no_model in configs):
        models.get(model)
    data_root = Path(os.environ.get("ABLATION_DATA", args.out / "data"))
    failed = False
    first_rows: dict[tuple[str, str], dict[str, object]] = {}
    for kernel in task.spec.kernels:
        for seed in args.seeds:
            for strategy, budget, no_model in configs:
                name = label(strategy, budget, no_model)
                path = args.out / f"{name}-s{seed}-{task.name}-{kernel.name}.json"
                if strategy in DETERMINISTIC and (name, kernel.name) in first_rows:
                    # the seed changes nothing in this strategy: the first seed's row stands for all
                    copy = dict(first_rows[name, kernel.name], seed=seed, copied_from_seed=args.seeds[0])
                    path.write_text(json.dumps(copy, indent=1) + "\n", encoding="utf-8")
                    continue
                uses_model = strategy in MODEL_STRATEGIES and not no_model
                limit = args.model_time_limit if uses_model else args.time_limit
                env = dict(os.environ, XDG_DATA_HOME=str(data_root / f"{task.name}-{name}-s{seed}"))
                options = OptimizeOptions(model=model, use_model=uses_model, time_limit_s=limit)
                try:
                    with GpuResources(env, Path.home()) as resources:  # its own overlay (XDG_DATA_HOME)
                        row = run_task_kernel(task, kernel, strategy=strategy, budget=budget, seed=seed,
                                              options=options, models=models, resources=resources,
                                              peaks=measured_peaks)
                except InputError as error:
                    row = {"task": task.name, "kernel": kernel.name, "best": None, "error": str(error)}
                    failed = True
                row.update({"config": name, "strategy": strategy, "budget": budget, "seed": seed,
                            "no_model": no_model, "time_limit_s": limit})
                first_rows.setdefault((name, kernel.name), row)
                path.write_text(json.dumps(row, indent=1) + "\n", encoding="utf-8")
                roof = row.get("roofline")
                fraction = roof.get("fraction") if isinstance(roof, dict) else None
                print(f"{task.name}/{kernel.name} {name} seed {seed}: roofline fraction {fraction} "
                      f"({'time-limited' if row.get('time_limited') else 'budget spent'})", file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
