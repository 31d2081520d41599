"""The CPU side of the GPU suite's applier shards: everything a shard does before its GPU calls.

    python bench/shard_path.py [--stride K] [--offset I] [--no-compile] [--profile OUT.prof] [--json OUT]

Walks the work items of the applier GPU files as they walk them (tests/gpu/test_gpu_appliers.py,
test_gpu_redteam.py, test_structural_grids_gpu.py, test_appliers_gpu.py: the same kernels,
appliers, `rewrites_of` / `apply` calls and `gpu_sample`s, imported from those files), every K-th
item from I (`--stride`, `--offset`; 1 and 0 = all of them), and for each: builds the evaluator
(the original compiled), generates the applier's rewrites with an H200's limits, and passes each
sampled rewrite through `CudaEvaluator.evaluate` without a device (the signature check, the launch
resolved, the nvcc compile; a shard then runs it on the GPU). `--no-compile` times the generation
only. Prints seconds per phase (wall; this process's CPU time and nvcc's, its children's, beside it:
on a busy machine the CPU times are the figures to compare) and per rewrite, so a
commit's shard path can be compared with another's: run this file from each checkout (it imports
that checkout's tests and, with PYTHONPATH=<checkout>/server, its code). Each run compiles into a
fresh cache directory, as each shard does.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for folder in ("tests/support", "tests/gpu", "tests/unit/search"):
    sys.path.insert(0, str(ROOT / folder))

from regrapht.app.optimize import kernel_target  # noqa: E402
from regrapht.search.appliers import ApplierInput, DeviceLimits, rewrites_of  # noqa: E402
from regrapht.spec.model import load_spec, parse_spec  # noqa: E402
from regrapht.validate.compiler import CompileCache, Compiler, find_demangler, find_nvcc  # noqa: E402
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator  # noqa: E402
from regrapht.validate.types import Candidate  # noqa: E402

H200 = DeviceLimits(132, 2048, 1024, 48 * 1024)


@dataclass(frozen=True)
class Item:
    """One (kernel, applier) of a GPU test: what to build the evaluator from and how to ask."""

    name: str
    group: str  # the items that share one evaluator (one kernel of one test)
    source: str
    file: str
    spec: Any  # a loaded Spec
    kernel: str
    applier: Any
    plain_fallback: bool  # rewrites_of (the plain-form retry) or the applier's own apply
    whole: bool  # every rewrite (the structural grids), else gpu_sample


def _items() -> Iterator[Item]:
    from applier_results import WHOLE_GRIDS, checked_whole

    gpu_appliers = importlib.import_module("test_gpu_appliers")
    for spec_path in gpu_appliers.SPECS:
        source_path = gpu_appliers._source_of(spec_path)
        source, spec = source_path.read_text(), load_spec(spec_path)
        for kernel in spec.kernels:
            for applier in gpu_appliers.APPLIERS:
                if not checked_whole(spec_path, type(applier).__name__):
                    yield Item(f"appliers:{spec_path.parent.name}/{kernel.name}/{type(applier).__name__}",
                               f"appliers:{spec_path}/{kernel.name}", source,
                               source_path.name, spec, kernel.name, applier, True, False)
    redteam = importlib.import_module("test_gpu_redteam")
    for case in redteam.CASES:
        source = (redteam.DATA / f"{case}.cu").read_text()
        spec = load_spec(redteam.DATA / f"{case}.regrapht.toml")
        expected = source.split("// applier: ", 1)[1].split("\n", 1)[0].split()
        for name in [word for word in expected if word != "or"]:
            if not checked_whole(redteam.DATA / f"{case}.regrapht.toml", name):
                yield Item(f"redteam:{case}/{name}", f"redteam:{case}", source, f"{Path(case).name}.cu", spec, spec.kernels[0].name,
                           redteam.BY_NAME[name], True, False)
    grids = importlib.import_module("test_structural_grids_gpu")
    for case in sorted(WHOLE_GRIDS):
        spec = load_spec(ROOT / f"{case}.regrapht.toml")
        source = (ROOT / f"{case}.cu").read_text()
        for kernel in spec.kernels:
            yield Item(f"grids:{Path(case).name}/{kernel.name}", f"grids:{case}/{kernel.name}", source, f"{Path(case).name}.cu", spec, kernel.name,
                       grids.BY_NAME[WHOLE_GRIDS[case][0]], True, True)
    cases = importlib.import_module("test_appliers_gpu")
    for applier, case, source, kernel, launch in cases.CASES:
        spec = parse_spec(cases._spec(source, kernel, launch, case), file=f"{case}.regrapht.toml")
        yield Item(f"cases:{case}/{applier.__name__}", f"cases:{case}/{applier.__name__}", source, f"{case}.cu", spec, kernel, applier(), False, False)


@dataclass
class Tally:
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(
        ("evaluator", "generate", "evaluate"), 0.0))
    cpu: dict[str, float] = field(default_factory=lambda: dict.fromkeys(("evaluator", "generate", "evaluate"), 0.0))
    child_cpu: dict[str, float] = field(default_factory=lambda: dict.fromkeys(("evaluator", "evaluate"), 0.0))
    items: int = 0
    kernels: int = 0
    rewrites: int = 0
    sampled: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)

    def timed(self, phase: str, work: Callable[[], Any]) -> Any:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started, cpu = time.perf_counter(), time.process_time()
        result = work()
        self.seconds[phase] += time.perf_counter() - started
        self.cpu[phase] += time.process_time() - cpu
        if phase in self.child_cpu:
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            self.child_cpu[phase] += (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return result


def run(items: list[Item], compile_them: bool, cache_dir: Path) -> Tally:
    from applier_results import gpu_sample

    nvcc = find_nvcc(os.environ)
    if nvcc is None:
        raise SystemExit("nvcc not found")
    compiler = Compiler(nvcc, cache=CompileCache(cache_dir), demangler=find_demangler(nvcc, os.environ))
    tally = Tally()
    evaluators: dict[str, CudaEvaluator] = {}
    for item in items:
        tally.items += 1
        key = item.group
        if compile_them and key not in evaluators:
            # one evaluator per kernel and test, as the tests build them (the original compiled once)
            evaluators.clear()
            evaluators[key] = tally.timed("evaluator", lambda item=item: CudaEvaluator(
                item.source, item.kernel, item.spec, arch="sm_90", worker=None, cache_dir=cache_dir,
                compiler=compiler, file=item.file, settings=CheckSettings(check_timeout_s=60.0), env=os.environ))
            tally.kernels += 1
        target = kernel_target(item.spec.kernel(item.kernel))
        given = ApplierInput(item.source, item.kernel, target.launch, target.constants, H200)
        rewrites = tally.timed("generate", lambda item=item, given=given: rewrites_of(item.applier, given)
                               if item.plain_fallback else item.applier.apply(given))
        tally.rewrites += len(rewrites)
        chosen = rewrites if item.whole else gpu_sample(rewrites)
        tally.sampled += len(chosen)
        if not compile_them:
            continue
        evaluator = evaluators[key]
        for rewrite in chosen:
            evaluation = tally.timed("evaluate", lambda rewrite=rewrite, evaluator=evaluator, item=item: evaluator.evaluate(
                Candidate(rewrite.source, rewrite.launch, (item.applier.technique,))))
            tally.outcomes[evaluation.outcome] = tally.outcomes.get(evaluation.outcome, 0) + 1
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stride", type=int, default=1)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    every = list(_items())
    chosen = every[args.offset :: args.stride]
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="shard-path-") as tmp:
        profiler = cProfile.Profile() if args.profile else None
        started = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        tally = run(chosen, not args.no_compile, Path(tmp))
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(str(args.profile))
        wall = time.perf_counter() - started
    per = {phase: round(seconds, 2) for phase, seconds in tally.seconds.items()}
    report = {"commit": commit, "items": f"{len(chosen)} of {len(every)} (stride {args.stride}, offset {args.offset})",
              "kernels": tally.kernels, "rewrites": tally.rewrites, "sampled": tally.sampled,
              "wall_s": round(wall, 2), "phase_s": per,
              "python_cpu_s": {phase: round(s, 2) for phase, s in tally.cpu.items()},
              "nvcc_cpu_s": {phase: round(s, 2) for phase, s in tally.child_cpu.items()},
              "evaluate_s_per_rewrite": round(tally.seconds["evaluate"] / tally.sampled, 3) if tally.sampled else None,
              "outcomes": tally.outcomes}
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
