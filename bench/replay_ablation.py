"""Replays the search ablation offline, on the verdicts a GPU run of bench/ablation.py stored.

    python bench/replay_ablation.py ROWS_DIR [--configs mcgs:24 rules:24 ...] [--seeds 0 1 2]
        [--tasks NAME ...] [--corpus bench/corpus] [--model-seconds S] [--model-time-budget S]

bench/ablation.py writes, per task, a measurement summary (`cache-<task>[-<part>].json`) whose
`entries` list every candidate any of that run's searches judged, by `candidate_digest` (exact
source and launch), with its verdict and speedup, and the `device` the appliers sized their grids
by. This tool runs every (configuration, seed) search of those tasks again on this machine: the
real appliers, graph and search code, with an evaluator that answers a candidate with the stored
verdict of its exact source and launch. A candidate no search of the GPU run judged is
*unmeasured*: counted, reported, never faster (so a replayed search that wanders outside what was
measured can only look worse than it would be). What it is for: trying a change to the search on
logged measurements in minutes, before spending device time on it; the GPU run decides.

The model is a stand-in whose every answer is refused before compiling (what SmolLM2's answers
were in the logged runs, bar a handful) and takes `--model-seconds` of a simulated clock, so the
search's model time budget binds as it did on the host; the model failure memory is kept per
kernel across configurations and seeds in the order given, as bench/ablation.py keeps it.

With nvcc on this machine the graph strategies get each kernel's evidence (search/evidence.py:
its findings confirmed on its PTX, as `regrapht optimize` computes it); `--no-evidence` replays
without it. Prints, per configuration, the geomean speedup over kernels (no answer: 1.0) and the unmeasured
count, then every kernel where mcgs and `rules` of the same budget differ.
`--compare`: also
each replayed search against the GPU run's row of the same configuration, seed and kernel
(`<config>-s<seed>-<task>-<kernel>.json` in ROWS_DIR): the same answer is the same best candidate
(its exact source and launch) at the same speedup, or no answer in both; prints how many agree and
every one that does not, and exits 1 when one does not (run it with the configurations and seeds
the GPU run had: a row that is not there is counted apart).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regrapht.app.model_memory import KindRecord, skip_reason
from regrapht.app.optimize import EVIDENCE_STRATEGIES, MODEL_STRATEGIES, kernel_target
from regrapht.errors import InputError
from regrapht.evaluation.runner import Task, load_task
from regrapht.graph import open_graph
from regrapht.inputs import read_source
from regrapht.model.backend import ChatMessage, Completion
from regrapht.search import OptimizeRequest, SearchHooks, SearchOptions, SearchTools, optimize
from regrapht.search.evidence import compiled_evidence
from regrapht.search.request import OptimizeOptions
from regrapht.search.run import RewriteMemo
from regrapht.spec.launch import LaunchConfig
from regrapht.validate.compiler import Compiler
from regrapht.validate.measurements import candidate_digest
from regrapht.validate.types import Candidate, Evaluation, Timing

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ablation import label, parse_config  # noqa: E402  (bench/ablation.py: one spelling of a configuration)

REFUSED_ANSWER = "I cannot help with that."  # holds no kernel: refused before compiling, as SmolLM2's were


@dataclass
class SimulatedClock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class RefusingModel:
    """A model whose every answer is refused; each call takes `seconds` of `clock`."""

    clock: SimulatedClock
    seconds: float
    name: str = "replayed-model"
    device: str = "cpu"

    def complete(self, messages: list[ChatMessage], *, max_tokens: int, temperature: float, seed: int,
                 should_stop: Callable[[], bool] | None = None, on_token: Callable[[str], None] | None = None,
                 prefill: str = "", grammar: str | None = None) -> Completion:
        self.clock.now += self.seconds
        return Completion(prefill + REFUSED_ANSWER, 100, 8, "stop")


@dataclass
class KernelMemory:
    """The model failure memory of one kernel, in memory: the product's records and rule
    (app/model_memory.py), without its files."""

    records: dict[str, KindRecord] = field(default_factory=dict)

    def skip_reason(self, kind: str) -> str | None:
        return skip_reason(self.records.get(kind, KindRecord()))

    def record(self, kind: str, correct: bool) -> None:
        self.records[kind] = self.records.get(kind, KindRecord()).plus(KindRecord(1, int(correct)))


@dataclass
class ReplayEvaluator:
    """Stored verdicts by candidate digest; anything else is `unmeasured` (never faster)."""

    verdicts: Mapping[str, Mapping[str, Any]]
    gpu_name: str | None
    device: dict[str, Any] | None
    arch: str = "sm_90"
    unmeasured: int = 0
    no_device_reason: str = ""

    def hold_gpu(self) -> AbstractContextManager[None]:
        return nullcontext()  # nothing runs on a device in a replay

    def baseline(self) -> Timing:
        return Timing(1.0, 1.0, 1.0, 1)

    def evaluate(self, candidate: Candidate) -> Evaluation:
        stored = self.verdicts.get(candidate_digest(candidate.source, candidate.launch))
        if stored is None:
            self.unmeasured += 1
            return Evaluation("unverified", "not measured in the replayed run")
        speedup = stored.get("speedup")
        timing = Timing(1.0 / speedup, 1.0 / speedup, 1.0 / speedup, 1) if isinstance(speedup, int | float) and speedup > 0 else None
        return Evaluation(stored["outcome"], "", timing, speedup if isinstance(speedup, int | float) else None)


def load_summaries(rows: Path) -> dict[str, tuple[dict[str, dict[str, Any]], dict[str, Any] | None]]:
    """Per task: verdicts by digest (merged over its parts) and the device map."""
    found: dict[str, tuple[dict[str, dict[str, Any]], dict[str, Any] | None]] = {}
    for path in sorted(rows.glob("cache-*.json")):
        summary = json.loads(path.read_text(encoding="utf-8"))
        if "entries" not in summary:
            raise InputError("this measurement summary lists no entries (written before the replay existed)",
                             file=str(path))
        verdicts, device = found.get(summary["task"], ({}, None))
        verdicts.update({e["digest"]: e for e in summary["entries"]})
        found[summary["task"]] = (verdicts, device or summary.get("device"))
    return found


def find_task(corpus: Path, name: str) -> Task:
    for split in ("train", "test"):
        if (corpus / split / name).is_dir():
            return load_task(corpus / split / name)
    raise InputError(f"no corpus task {name!r} under {corpus}/train or {corpus}/test")


def replay_task(task: Task, verdicts: Mapping[str, Mapping[str, Any]], device: dict[str, Any] | None,
                configs: Sequence[tuple[str, int, bool]], seeds: Sequence[int], *, model_seconds: float,
                model_time_budget_s: float, compiler: Compiler | None = None) -> list[dict[str, Any]]:
    """Every (kernel, configuration, seed) search of `task` against the stored verdicts; with a
    `compiler`, the graph strategies get the kernel's nvcc evidence as the product computes it
    (search/evidence.py; the compiler runs here, nothing on a device)."""
    source, _warnings = read_source(task.source_path)
    results = []
    options = OptimizeOptions(search=SearchOptions(model_time_budget_s=model_time_budget_s))
    for kernel in task.spec.kernels:
        memory = KernelMemory()
        memo: RewriteMemo = {}  # applier matching is most of a replay's time
        evidence = compiled_evidence(compiler, source, kernel.name, task.source_path.resolve(), "sm_90") \
            if compiler is not None else None
        for strategy, budget, no_model in configs:
            for seed in seeds:
                clock = SimulatedClock()
                evaluator = ReplayEvaluator(verdicts, "replayed GPU", device)
                model = RefusingModel(clock, model_seconds) if strategy in MODEL_STRATEGIES and not no_model else None
                request = OptimizeRequest(kernel.name, source, strategy=strategy, budget=budget, seed=seed,
                                          options=options)
                tools = SearchTools(evaluator, model, open_graph(), memory if model is not None else None,
                                    memo, evidence=evidence if strategy in EVIDENCE_STRATEGIES else None)
                result = optimize(request, kernel_target(kernel), tools, SearchHooks(clock=clock))
                best = result.best
                results.append({"task": task.name, "kernel": kernel.name,
                                "config": label(strategy, budget, no_model), "seed": seed,
                                "speedup": best.speedup if best is not None else 1.0,
                                "answer": candidate_digest(best.source, best.launch) if best is not None else None,
                                "techniques": "+".join(result.best.techniques) if result.best is not None else "",
                                "generated": result.counters.generated, "unmeasured": evaluator.unmeasured})
    return results


def recorded_answer(row: Mapping[str, Any]) -> tuple[str | None, float]:
    """A GPU run's row as (the digest of its best candidate, its speedup); (None, 1.0): no answer."""
    best = row.get("best")
    if not isinstance(best, Mapping):
        return None, 1.0
    launch = best["launch"]
    digest = candidate_digest(best["source"], LaunchConfig(tuple(launch["grid"]), tuple(launch["block"]),
                                                           launch["shared_bytes"]))
    return digest, float(best["speedup"])


def compare(results: Sequence[Mapping[str, Any]], rows: Path) -> tuple[str, bool]:
    """Each replayed search against its recorded row (`--compare`): a report and whether all agree."""
    same, differing, missing = 0, [], 0
    for r in results:
        path = rows / f"{r['config']}-s{r['seed']}-{r['task']}-{r['kernel']}.json"
        if not path.is_file():
            missing += 1
            continue
        digest, speedup = recorded_answer(json.loads(path.read_text(encoding="utf-8")))
        if digest == r["answer"] and math.isclose(speedup, r["speedup"], rel_tol=1e-9):
            same += 1
        else:
            differing.append(f"- {r['task']}/{r['kernel']} {r['config']} seed {r['seed']}: replayed {r['speedup']:.4f}x"
                             f" ({r['techniques'] or 'no answer'}), recorded {speedup:.4f}x"
                             f"{'' if digest == r['answer'] else ', another candidate'}")
    lines = [f"{same} of {same + len(differing)} replayed searches give the recorded answer"
             + (f" ({missing} replayed searches have no recorded row)" if missing else ""), *differing]
    return "\n".join(lines), not differing


def geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 1.0


def report(results: Sequence[Mapping[str, Any]]) -> str:
    by_config: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    unmeasured: dict[str, int] = defaultdict(int)
    per_kernel: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        by_config[r["config"]][r["seed"]].append(r["speedup"])
        unmeasured[r["config"]] += r["unmeasured"]
        per_kernel[r["task"], r["kernel"]][r["config"]].append(r["speedup"])
    lines = ["| config | geomean speedup (mean of seeds) | min | max | unmeasured candidates |", "|---|---|---|---|---|"]
    for config in sorted(by_config):
        means = [geomean(v) for v in by_config[config].values()]
        lines.append(f"| {config} | {sum(means) / len(means):.4f} | {min(means):.4f} | {max(means):.4f} | {unmeasured[config]} |")
    lines.append("")
    for (task, kernel), configs in sorted(per_kernel.items()):
        for config, speedups in sorted(configs.items()):
            if not config.startswith("mcgs-b"):
                continue
            rules = configs.get("rules-b" + config.split("-b")[1])
            if rules is None:
                continue
            ours, theirs = geomean(speedups), geomean(rules)
            if abs(ours / theirs - 1) > 0.002:
                lines.append(f"{task}/{kernel} {config}: {ours:.3f} vs rules {theirs:.3f} ({ours / theirs - 1:+.1%})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=Path, help="the rows directory of a bench/ablation.py run (its cache-*.json)")
    parser.add_argument("--configs", nargs="+", default=["mcgs:6", "rules:6", "mcgs:12", "rules:12", "mcgs:24", "rules:24"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--tasks", nargs="+", help="only these tasks")
    parser.add_argument("--corpus", type=Path, default=Path("bench/corpus"))
    parser.add_argument("--model-seconds", type=float, default=10.0, help="simulated seconds per model call")
    parser.add_argument("--model-time-budget", type=float, default=8.0)
    parser.add_argument("--json", type=Path, help="write every replayed search here")
    parser.add_argument("--compare", action="store_true",
                        help="compare each replayed search with the GPU run's row (exit 1 when one differs)")
    parser.add_argument("--no-evidence", action="store_true",
                        help="replay without the kernels' nvcc evidence (search/evidence.py), as before it existed")
    args = parser.parse_args(argv)
    try:
        configs = [parse_config(c) for c in args.configs]
        summaries = load_summaries(args.rows)
        results: list[dict[str, Any]] = []
        compiler = None if args.no_evidence else Compiler.found(os.environ, None)
        for name, (verdicts, device) in sorted(summaries.items()):
            if args.tasks and name not in args.tasks:
                continue
            results += replay_task(find_task(args.corpus, name), verdicts, device, configs, args.seeds,
                                   model_seconds=args.model_seconds, model_time_budget_s=args.model_time_budget,
                                   compiler=compiler)
            print(f"replayed {name}", file=sys.stderr, flush=True)
    except InputError as error:
        print(f"replay: error: {error}", file=sys.stderr)
        return 2
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(report(results))
    if args.compare:
        text, agree = compare(results, args.rows)
        print(text)
        return 0 if agree else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
