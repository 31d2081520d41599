"""`regrapht eval`: optimize every kernel of every task directory, re-check, and report.

A task directory holds one `.cu` file and its `.regrapht.toml`, optionally with a `task.json`:
`{"flops": "<expression over the spec's scalars>", "family": "<name>"}`. FLOPs (for the roofline
floor of compute-bound kernels) come from the spec's own `flops` key when it has one, else from
`task.json`; `family` groups the report's per-family rows (bench/corpus tags every task). Each kernel's
final answer is re-checked by a fresh evaluator (new inputs, new worker state) so that the
report never rests on the search's own measurement alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from regrapht.app.optimize import ModelCache, OptimizeOptions, OptimizeRequest, Wire, open_run, run_optimize
from regrapht.app.resources import GpuResources
from regrapht.errors import InputError
from regrapht.evaluation.report import roofline_floor_ms
from regrapht.inputs import MAX_JSON_BYTES, read_source, read_text_bounded
from regrapht.search import OptimizeResult
from regrapht.spec.expr import evaluate
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import KernelSpec, Spec, load_spec
from regrapht.spec.resolve import resolve
from regrapht.validate.compile_db import NO_FLAGS, CompileFlags
from regrapht.validate.peaks import device_peaks
from regrapht.validate.types import Candidate


@dataclass(frozen=True)
class Task:
    name: str
    source_path: Path
    spec: Spec
    flops: str | None
    family: str | None = None


def load_task(directory: Path) -> Task:
    if not directory.is_dir():
        raise InputError("not a task directory", file=str(directory))
    specs = sorted(directory.glob("*.regrapht.toml"))
    if len(specs) != 1:
        raise InputError(f"a task directory needs exactly one .regrapht.toml (found {len(specs)})", file=str(directory))
    source = specs[0].with_name(specs[0].name.removesuffix(".regrapht.toml") + ".cu")
    if not source.is_file():
        raise InputError(f"missing {source.name} beside the spec", file=str(directory))
    flops = family = None
    extra = directory / "task.json"
    if extra.is_file():
        try:
            data = json.loads(read_text_bounded(extra, MAX_JSON_BYTES, "task.json"))
        except (ValueError, RecursionError) as error:
            raise InputError(f"unreadable task.json: {error}", file=str(extra)) from error
        if not isinstance(data, dict):
            raise InputError("task.json must hold a JSON object", file=str(extra))
        flops = str(data["flops"]) if "flops" in data else None
        if "family" in data:
            if not isinstance(data["family"], str) or not data["family"].strip():
                raise InputError(f"'family' must be a non-empty string, got {data['family']!r}",
                                 file=str(extra), key="family")
            family = data["family"].strip()
    return Task(directory.name, source, load_spec(specs[0]), flops, family)


_ELEMENT_BYTES = {"float32": 4, "float64": 8, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
                  "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "bool": 1}


def traffic(kernel: KernelSpec, flops_expr: str | None) -> tuple[int, float | None]:
    """Bytes the kernel must move (in: read once, out: written once, inout: both) and FLOPs."""
    resolved = resolve(kernel)
    total = 0
    for buffer in resolved.buffers:
        size = buffer.count * _ELEMENT_BYTES.get(buffer.dtype, 4)
        total += 2 * size if buffer.role == "inout" else size
    flops = float(evaluate(flops_expr, dict(resolved.scalars))) if flops_expr else None
    return total, flops


def measured_peaks(resources: GpuResources, arch: str) -> tuple[float, float] | None:
    """The device's (GB/s, GFLOP/s) peaks, measured once per GPU and cached in the cache dir."""
    worker = resources.device_worker()
    if worker is None:
        return None
    found = device_peaks(worker, resources.compiler(), resources.ensure_cache_dir(), arch=arch,
                         gpu_lock=resources.gpu_lock)
    return (found.gbps, found.gflops) if found is not None else None


# (task, kernel, original source, search result, resources) -> the re-check's JSON object
Recheck = Callable[[Task, KernelSpec, str, OptimizeResult, GpuResources], dict[str, object]]


def run_task_kernel(task: Task, kernel: KernelSpec, *, strategy: str, budget: int, seed: int,
                    options: OptimizeOptions, models: ModelCache, resources: GpuResources,
                    peaks: Callable[[GpuResources, str], tuple[float, float] | None],
                    wire: Wire = open_run, recheck_with: Recheck | None = None) -> dict[str, object]:
    """One kernel of a task through `run_optimize`, re-checked, with its roofline fraction;
    `peaks(resources, arch)` gives the device's (GB/s, GFLOP/s). `wire` and `recheck_with`
    (default: `open_run`, `recheck`) let the ablation share an evaluator and its measurements."""
    source, _warnings = read_source(task.source_path)
    request = OptimizeRequest(kernel.name, source, task.source_path, task.spec, strategy, budget, seed, options)
    outcome = run_optimize(request, resources, models=models, wire=wire)
    result = outcome.result
    assert result is not None  # eval searches without a device too (compile-only)
    peak = peaks(resources, result.arch) if result.gpu is not None else None
    row = dict(result.to_json())
    row["task"] = task.name
    if task.family is not None:
        row["family"] = task.family
    row["recheck"] = recheck_with(task, kernel, source, result, resources) if recheck_with is not None else \
        recheck(task, kernel, source, result, resources, flags=options.compile.lookup(task.source_path).flags)
    bytes_moved, flops = traffic(kernel, str(kernel.flops) if kernel.flops is not None else task.flops)
    time_ms = result.best.time_ms if result.best is not None else result.baseline_ms
    floor = None
    if peak is not None:
        floor = roofline_floor_ms(bytes_moved, flops, peak[0], peak[1])
    row["roofline"] = {
        "bytes": bytes_moved, "flops": flops, "peak_gbps": peak[0] if peak else None,
        "peak_gflops": peak[1] if peak else None, "floor_ms": floor,
        "fraction": floor / time_ms if floor is not None and time_ms else None,
    }
    return row


def eval_row(task: Task, kernel: KernelSpec, *, strategy: str, budget: int, seed: int, options: OptimizeOptions,
             models: ModelCache, resources: GpuResources,
             peaks: Callable[[GpuResources, str], tuple[float, float] | None]) -> tuple[dict[str, object], bool]:
    """One kernel of `regrapht eval` (local or a cluster job): its report row, and whether it
    failed (the task did not run, or the re-check of its answer did not pass). Bad input in the
    task is the row's `error`, never an exception."""
    try:
        row = run_task_kernel(task, kernel, strategy=strategy, budget=budget, seed=seed, options=options,
                              models=models, resources=resources, peaks=peaks)
    except InputError as error:
        return not_run_row(task, kernel.name, str(error)), True
    return row, row_failed(row)


def not_run_row(task: Task, kernel: str, error: str) -> dict[str, object]:
    """The report row of a kernel whose search did not run (bad input, a failed cluster job)."""
    row: dict[str, object] = {"task": task.name, "kernel": kernel, "best": None, "error": error,
                              "recheck": {"outcome": None, "reason": "task did not run"}}
    if task.family is not None:
        row["family"] = task.family
    return row


def row_failed(row: dict[str, object]) -> bool:
    """Whether a report row makes `eval` fail: it did not run, or its answer's re-check did not pass."""
    if row.get("error"):
        return True
    recheck_row = row.get("recheck")
    return (row.get("best") is not None and isinstance(recheck_row, dict)
            and recheck_row.get("outcome") not in ("faster", "slower"))


def recheck(task: Task, kernel: KernelSpec, source: str, result: OptimizeResult,
            resources: GpuResources, *, flags: CompileFlags = NO_FLAGS) -> dict[str, object]:
    """A fresh evaluator in a fresh GPU worker process (new random inputs, new worker state; the
    same cache dir and GPU lock) judges the final answer again, compiled with the same `flags`."""
    if result.best is None:
        return {"outcome": None, "reason": "no answer to re-check"}
    with GpuResources(resources.env, resources.home) as fresh_resources:
        fresh = open_run(source, str(task.source_path), kernel.name, task.spec, fresh_resources, flags=flags)
        fresh.evaluator.baseline()
        launch = LaunchConfig(tuple(result.best.launch.grid), tuple(result.best.launch.block),
                              result.best.launch.shared_bytes)
        evaluation = fresh.evaluator.evaluate(Candidate(result.best.source, launch, result.best.techniques))
    return {"outcome": evaluation.outcome, "speedup": evaluation.speedup, "reason": evaluation.reason}
