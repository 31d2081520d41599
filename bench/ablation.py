"""The search ablation on one corpus task: every configuration and seed, one process, one cache.

    python bench/ablation.py TASKDIR --out DIR [--configs mcgs:12 rules:6 mcgs:12:no-model ...]
        [--seeds 0 1 2] [--time-limit S] [--model-time-budget S] [--model PATH] [--model-threads N]

A configuration is STRATEGY:BUDGET, optionally :no-model. Each (configuration, seed) runs
`regrapht eval`'s per-kernel step (search with the given budget, a re-check of the answer on
fresh inputs, the roofline fraction) and writes DIR/<config>-s<seed>-<task>-<kernel>.json: the
eval row plus `config`, `no_model`, `time_limit_s`, `model_time_budget_s` and `measurements`
(how many of the search's candidates were judged here and how many reused).

Shared measurements (the method; docs/search.md "Ablation"): every search of a kernel, whatever
its configuration and seed, judges candidates with one evaluator (one GPU worker, one set of
random inputs, the original timed once) and one `MeasurementCache`: a candidate whose exact
source and launch were already compiled, checked and timed is not compiled, checked or timed
again, and gets the same verdict and timing (it still costs the search one unit of budget, as a
fresh candidate would). Strategies are then compared on what they find, not on timing noise, and
the whole ablation costs about one search per distinct candidate. The answer of each search is
re-checked by a second evaluator (its own GPU worker and fresh random inputs) with its own cache:
the re-check verdict is reused only for the identical source and launch. Likewise the model
(loaded once) answers an identical request (same messages, prefill, seed: the request's seed
derives from the search's seed and the request) once (`model/reused.py`); the reused answer
counts the seconds its generation took against the search's model time budget. A wrong candidate can
never pass through the cache: only an identical text reuses a verdict, and only verdicts that
text would get again are kept (crashes and timeouts are judged afresh).

Each search has its own graph overlay directory: no search learns from another, every search
starts from the bundled graph. The model (loaded once) is bounded per search by
`--model-time-budget` (seconds of model calls; the last call may end past it) and asked only
where no applier rewrite of the code state is waiting; `--time-limit` is a safety stop for every
search (its row then says `time_limited`). `rules` uses no randomness, so it runs once per
kernel and its row is copied for the other seeds (`copied_from_seed`).
The model failure memory (docs/search.md; in the cache dir, like the product's) is on: once
3 answers of a kind for the kernel were judged and none was correct, later searches of the kernel
(later configurations and seeds, in the order given) make no more calls of that kind; their rows'
`model_calls` say `skipped` and why. run_ablation.sh empties it before a run.
`bench/merge_ablation.py DIR` prints the table.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from regrapht.app.optimize import (
    MODEL_STRATEGIES,
    ModelCache,
    ModelConfig,
    OptimizeOptions,
    OptimizeRun,
    Wire,
    evidence_wiring,
    kernel_target,
    llama_model,
    open_evaluator,
)
from regrapht.app.resources import GpuResources
from regrapht.errors import InputError
from regrapht.evaluation.runner import Task, load_task, measured_peaks, run_task_kernel
from regrapht.inputs import read_source
from regrapht.model.reused import ReusedAnswers
from regrapht.search import STRATEGIES, SearchOptions
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import KernelSpec, Spec
from regrapht.validate.compile_db import NO_FLAGS, CompileFlags
from regrapht.validate.measurements import MeasurementCache
from regrapht.validate.types import Candidate

if TYPE_CHECKING:
    from regrapht.search import OptimizeResult
    from regrapht.search.evidence import KernelEvidence
    from regrapht.validate.evaluator import CudaEvaluator

DEFAULT_CONFIGS = ("mcgs:12", "greedy:12", "random:12", "rules:12", "cot:12", "mcgs:12:no-model",
                   "mcgs:6", "rules:6", "mcgs:24", "rules:24")

# Strategies that use no randomness: one run per (configuration, kernel) stands for every seed.
DETERMINISTIC = frozenset({"rules"})

METHOD = ("shared measurements: one evaluator (one GPU worker, one set of random inputs, the original timed "
          "once) per kernel for every configuration and seed; a candidate with the exact source and launch of "
          "one already judged reuses its verdict and timing (and still costs one unit of budget); answers are "
          "re-checked on a second evaluator's fresh inputs, a re-check reused only for the identical text")


def parse_config(text: str) -> tuple[str, int, bool]:
    parts = text.split(":")
    if len(parts) not in (2, 3) or parts[0] not in STRATEGIES or not parts[1].isdigit() or (
            len(parts) == 3 and parts[2] != "no-model"):
        raise InputError(f"bad configuration {text!r}: STRATEGY:BUDGET[:no-model], strategy one of "
                         f"{', '.join(STRATEGIES)}")
    return parts[0], int(parts[1]), len(parts) == 3


def label(strategy: str, budget: int, no_model: bool) -> str:
    return f"{strategy}{'-nomodel' if no_model else ''}-b{budget}"


@dataclass
class SharedMeasurements:
    """One task's evaluators and caches: the searches' (`wire_for`) and the re-checks' (`recheck`)."""

    resources: GpuResources
    recheck_resources: GpuResources  # a second GPU worker: the re-check's inputs are its own
    measurements: MeasurementCache = field(default_factory=MeasurementCache)
    recheck_measurements: MeasurementCache = field(default_factory=MeasurementCache)
    _evaluators: dict[str, CudaEvaluator] = field(default_factory=dict)
    _recheckers: dict[str, CudaEvaluator] = field(default_factory=dict)
    _evidence: dict[str, Callable[[], KernelEvidence | None]] = field(default_factory=dict)

    def wire_for(self, overlay_path: Path) -> Wire:
        """`run_optimize`'s wiring for one search: the kernel's shared evaluator, and the bundled
        graph with this search's own overlay."""
        def wire(source: str, file: str, kernel: str, spec: Spec, resources: GpuResources, *,
                 arch: str | None = None, graph_path: Path | None = None,
                 flags: CompileFlags = NO_FLAGS) -> OptimizeRun:
            from regrapht.graph import open_graph

            evaluator = self._evaluators.get(kernel)
            if evaluator is None:
                evaluator = open_evaluator(source, file, kernel, spec, self.resources, arch=arch,
                                           measurements=self.measurements, flags=flags)
                self._evaluators[kernel] = evaluator
            graph = open_graph(graph_path, overlay_path)
            evidence = self._evidence.get(kernel)
            if evidence is None:
                # nvcc's evidence on the kernel, once per kernel (search/evidence.py)
                evidence = self._evidence[kernel] = evidence_wiring(source, file, kernel, self.resources, evaluator.arch,
                                                                    flags)
            return OptimizeRun(evaluator, graph, overlay_path, kernel_target(spec.kernel(kernel)), evidence)
        return wire

    def device(self) -> dict[str, object] | None:
        """The searches' device map (None before a search or without a device)."""
        return next((e.device for e in self._evaluators.values() if e.device is not None), None)

    def recheck(self, task: Task, kernel: KernelSpec, source: str, result: OptimizeResult,
                resources: GpuResources) -> dict[str, object]:
        """The answer judged again on the re-check evaluator's fresh inputs (once per identical text)."""
        if result.best is None:
            return {"outcome": None, "reason": "no answer to re-check"}
        evaluator = self._recheckers.get(kernel.name)
        if evaluator is None:
            evaluator = open_evaluator(source, str(task.source_path), kernel.name, task.spec, self.recheck_resources,
                                       measurements=self.recheck_measurements)
            self._recheckers[kernel.name] = evaluator
        evaluator.baseline()
        launch = LaunchConfig(tuple(result.best.launch.grid), tuple(result.best.launch.block),
                              result.best.launch.shared_bytes)
        evaluation = evaluator.evaluate(Candidate(result.best.source, launch, result.best.techniques))
        return {"outcome": evaluation.outcome, "speedup": evaluation.speedup, "reason": evaluation.reason,
                "reused": bool(evaluation.details.get("measurement_reused"))}


def summary_name(task: str, part: str) -> str:
    """The measurement summary's file name: one per task, or per share of its configurations."""
    return f"cache-{task}-{part}.json" if part else f"cache-{task}.json"


def run_task(task: Task, configs: list[tuple[str, int, bool]], seeds: list[int], out: Path, *,
             shared: SharedMeasurements, models: ModelCache, model: ModelConfig, time_limit_s: float,
             model_time_budget_s: float, data_root: Path, part: str = "") -> bool:
    """Every (kernel, configuration, seed) of `task`; rows into `out`. False if one failed."""
    failed = False
    read_source(task.source_path)  # a bad source is one clear error before any search
    for kernel in task.spec.kernels:
        first_rows: dict[str, dict[str, object]] = {}
        for strategy, budget, no_model in configs:
            name = label(strategy, budget, no_model)
            for seed in seeds:
                path = out / f"{name}-s{seed}-{task.name}-{kernel.name}.json"
                if strategy in DETERMINISTIC and name in first_rows:
                    # the seed changes nothing in this strategy: the first seed's row stands for all
                    copy = dict(first_rows[name], seed=seed, copied_from_seed=seeds[0])
                    path.write_text(json.dumps(copy, indent=1) + "\n", encoding="utf-8")
                    continue
                uses_model = strategy in MODEL_STRATEGIES and not no_model
                options = OptimizeOptions(model=model, use_model=uses_model, time_limit_s=time_limit_s,
                                          search=SearchOptions(model_time_budget_s=model_time_budget_s))
                overlay = data_root / f"{task.name}-{kernel.name}-{name}-s{seed}" / "overlay.msgpack"
                before = shared.measurements.stats()
                started = time.perf_counter()
                try:
                    row = run_task_kernel(task, kernel, strategy=strategy, budget=budget, seed=seed, options=options,
                                          models=models, resources=shared.resources, peaks=measured_peaks,
                                          wire=shared.wire_for(overlay), recheck_with=shared.recheck)
                except InputError as error:
                    row = {"task": task.name, "kernel": kernel.name, "best": None, "error": str(error)}
                    failed = True
                after = shared.measurements.stats()
                row.update({"config": name, "strategy": strategy, "budget": budget, "seed": seed,
                            "no_model": no_model, "time_limit_s": time_limit_s,
                            "model_time_budget_s": model_time_budget_s if uses_model else None,
                            "measurements": {"judged": after.misses - before.misses,
                                             "reused": after.hits - before.hits},
                            "job_s": round(time.perf_counter() - started, 3)})
                first_rows.setdefault(name, row)
                path.write_text(json.dumps(row, indent=1) + "\n", encoding="utf-8")
                roof = row.get("roofline")
                fraction = roof.get("fraction") if isinstance(roof, dict) else None
                print(f"{task.name}/{kernel.name} {name} seed {seed}: roofline fraction {fraction} "
                      f"({'time-limited' if row.get('time_limited') else 'done'}, {row['job_s']} s, "
                      f"measurements {row['measurements']})", file=sys.stderr, flush=True)
    cache = {"task": task.name, "method": METHOD, "search": shared.measurements.stats().to_json(),
             "recheck": shared.recheck_measurements.stats().to_json(),
             # every judged candidate by digest: bench/replay_ablation.py replays searches on these
             "entries": shared.measurements.entries(),
             # the device the appliers sized their grids by (the replay needs the same limits)
             "device": shared.device()}
    (out / summary_name(task.name, part)).write_text(json.dumps(cache, indent=1) + "\n", encoding="utf-8")
    return not failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--configs", nargs="+", default=list(DEFAULT_CONFIGS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--time-limit", type=float, default=60.0, help="s per search (a safety stop)")
    parser.add_argument("--model-time-budget", type=float, default=10.0,
                        help="s of model calls per search (checked before each call)")
    parser.add_argument("--model")
    parser.add_argument("--model-threads", type=int, default=4)
    parser.add_argument("--part", default="",
                        help="name of this share of the task's configurations (run_ablation.sh TASK_PARTS): "
                             "the measurement summary is then cache-<task>-<part>.json")
    args = parser.parse_args(argv)
    # one line per candidate and per model call in the job's log (where a task's time went)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    try:
        configs = [parse_config(c) for c in args.configs]
        task = load_task(args.task)
    except InputError as error:
        print(f"ablation: error: {error}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    model = ModelConfig(args.model, args.model_threads, 0)
    answers: list[ReusedAnswers] = []

    def reused_model(config: ModelConfig) -> ReusedAnswers:
        answers.append(ReusedAnswers(llama_model(config), time.perf_counter))
        return answers[-1]

    models = ModelCache(reused_model)  # one model process for every search; identical requests answered once
    if any(s in MODEL_STRATEGIES and not no_model for s, _, no_model in configs):
        models.get(model)
    data_root = Path(os.environ.get("ABLATION_DATA", args.out / "data"))
    with GpuResources(os.environ, Path.home()) as resources, \
            GpuResources(os.environ, Path.home()) as recheck_resources:
        try:
            ok = run_task(task, configs, args.seeds, args.out, shared=SharedMeasurements(resources, recheck_resources),
                          models=models, model=model, time_limit_s=args.time_limit,
                          model_time_budget_s=args.model_time_budget, data_root=data_root, part=args.part)
        except InputError as error:
            print(f"ablation: error: {error}", file=sys.stderr)
            return 2
    summary = args.out / summary_name(task.name, args.part)
    cache = json.loads(summary.read_text(encoding="utf-8"))
    cache["model_answers"] = {"generated": sum(a.misses for a in answers), "reused": sum(a.hits for a in answers)}
    summary.write_text(json.dumps(cache, indent=1) + "\n", encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
