"""Validation throughput: candidates checked per minute for a typical kernel (saxpy, its
example spec), with compilation parallel across CPU cores, and the check's overhead over the
kernel's own run time. The evaluator is one worker workspace: the first candidate pays for
generating the inputs and running the original once per seed, the rest reuse them on the device.

    python bench/validation_throughput.py [--candidates 24] [--out bench/results]

Without a CUDA device only compilation is measured (candidates end "unverified").
Writes validation_throughput-<date>-<gpu or cpu>.json and .md into --out.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from regrapht.spec.launch import LaunchConfig  # noqa: E402
from regrapht.spec.model import load_spec  # noqa: E402
from regrapht.validate.compiler import CompileCache, Compiler, find_demangler, find_nvcc  # noqa: E402
from regrapht.validate.evaluator import CudaEvaluator  # noqa: E402
from regrapht.validate.types import Candidate  # noqa: E402
from regrapht.validate.worker import GpuWorker  # noqa: E402


def candidates(source: str, count: int) -> list[Candidate]:
    blocks = [64, 128, 256, 512, 1024]
    made = []
    for i in range(count):
        block = blocks[i % len(blocks)]
        text = f"// candidate {i}\n" + source.replace("y[i] * 1.0", "y[i]" if i % 2 else "y[i] * 1.0f")
        made.append(Candidate(text, LaunchConfig((f"ceil_div(n, {block})",), (str(block),))))
    return made


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=24)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results"))
    parser.add_argument("--cache-dir", default="")
    args = parser.parse_args()
    env = dict(os.environ)
    nvcc = find_nvcc(env)
    if nvcc is None:
        print("nvcc not found", file=sys.stderr)
        return 2
    cache = Path(args.cache_dir or f"/tmp/regrapht-throughput-{os.getpid()}")
    compiler = Compiler(nvcc, cache=CompileCache(cache), demangler=find_demangler(nvcc, env))
    worker: GpuWorker | None = GpuWorker(env=env)
    assert worker is not None
    if worker.info().get("device") is None:
        worker.close()
        worker = None
    source = (ROOT / "examples" / "saxpy.cu").read_text()
    evaluator = CudaEvaluator(source, "saxpy", load_spec(ROOT / "examples" / "saxpy.regrapht.toml"), arch=None,
                              worker=worker, cache_dir=cache, compiler=compiler, file="saxpy.cu")
    baseline = evaluator.baseline()
    batch = candidates(source, args.candidates)
    started = time.monotonic()
    compiled = compiler.compile_many([(c.source, "candidate.cu") for c in batch], arch=evaluator.arch)
    compile_wall = time.monotonic() - started
    started = time.monotonic()
    results = evaluator.evaluate_many(batch)  # compiles are cache hits now: this is check + timing
    check_wall = time.monotonic() - started
    outcomes: dict[str, int] = {}
    for r in results:
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
    per_candidate = (compile_wall + check_wall) / len(batch)
    check_s = [float(r.details.get("check_s", 0.0)) for r in results]  # type: ignore[arg-type]
    time_s = [float(r.details.get("time_s", 0.0)) for r in results]  # type: ignore[arg-type]
    kernel_ms = baseline.median_ms if baseline else None
    gpu = evaluator.gpu_name
    figures = {
        "date": datetime.date.today().isoformat(),
        "machine": f"{platform.node()} ({os.cpu_count()} CPU cores)",
        "gpu": gpu, "arch": evaluator.arch, "kernel": "saxpy (examples/saxpy.regrapht.toml, n = 2^24)",
        "candidates": len(batch), "outcomes": outcomes,
        "compile_wall_s": round(compile_wall, 3),
        "compile_cpu_s": round(sum(c.seconds for c in compiled), 3),
        "check_and_time_wall_s": round(check_wall, 3),
        "candidates_per_minute": round(60 / per_candidate, 1),
        "mean_check_s": round(sum(check_s) / len(check_s), 4),
        "mean_timing_s": round(sum(time_s) / len(time_s), 4),
        "kernel_median_ms": kernel_ms,
        "check_overhead_x": round(sum(check_s) / len(check_s) * 1e3 / kernel_ms, 1) if kernel_ms else None,
        "candidate_runs_per_check": sum(t.candidate_runs for t in evaluator.trial_plan(None)),
        "session_seed": evaluator.session_seed,
        "mean_timing_runs": round(sum(r.timing.runs for r in results if r.timing) / max(1, sum(
            1 for r in results if r.timing)), 1),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tag = re.sub(r"[^A-Za-z0-9]+", "-", gpu or "cpu-only").strip("-")
    base = out / f"validation_throughput-{figures['date']}-{tag}"
    base.with_suffix(".json").write_text(json.dumps(figures, indent=2) + "\n")
    lines = [f"# Validation throughput, {figures['date']}, {figures['machine']}, GPU {gpu}", ""]
    lines += [f"- {k}: {v}" for k, v in figures.items()]
    base.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(json.dumps(figures, indent=2))
    if worker is not None:
        worker.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
