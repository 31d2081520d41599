"""Every deterministic applier's rewrites of every given kernel, checked and timed.

    python bench/verify_appliers.py run TASKDIR... --out DIR   # one DIR/<split>-<task>.json per task
    python bench/verify_appliers.py merge DIR                  # DIR/appliers.json + DIR/appliers.md

Feedback for the appliers: for each task (a `bench/corpus` or `bench/tasks` directory), each
applier of `search.appliers.APPLIERS` is given the original kernel; every rewrite it returns goes
through the evaluator the search uses (compile, differential check on fresh inputs, timing).
Each rewrite is reported with its outcome (faster / slower / wrong / compile_error / crashed /
timeout / rejected, or unverified where there is no GPU), its speedup over the original and the
fraction of the kernel's roofline floor it reaches. Without a CUDA device the rewrites are still
generated and compiled (outcome `unverified`), so the pipeline runs end to end on any machine.

`run` exits 0 when every rewrite compiled and none was wrong, crashed or hung; 1 otherwise (the
reports are written either way); 2 on bad input. `merge` tabulates the per-task files: per applier
(kernels matched, outcomes, best speedup), per kernel (the best verified rewrite) and every
failed rewrite with its reason.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from regrapht.app.optimize import kernel_target, open_run
from regrapht.app.resources import GpuResources
from regrapht.errors import InputError
from regrapht.evaluation.report import roofline_floor_ms
from regrapht.evaluation.runner import Task, load_task, measured_peaks, traffic
from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, rewrites_of
from regrapht.validate.types import Candidate

FAILED = ("wrong", "compile_error", "crashed", "timeout", "rejected")


def split_of(directory: Path) -> str:
    """`test` / `train` for corpus tasks (their parent folder), else the parent folder's name."""
    return directory.resolve().parent.name


def verify_task(task: Task, directory: Path, env: dict[str, str], home: Path) -> list[dict[str, Any]]:
    source = task.source_path.read_text(encoding="utf-8")
    reports = []
    for kernel in task.spec.kernels:
        started = time.monotonic()
        entry: dict[str, Any] = {"task": task.name, "split": split_of(directory), "family": task.family,
                                 "kernel": kernel.name, "rewrites": []}
        target = kernel_target(kernel)
        flops = str(kernel.flops) if kernel.flops is not None else task.flops
        bytes_moved, flop_count = traffic(kernel, flops)
        with GpuResources(env, home) as resources:
            evaluator = open_run(source, str(task.source_path), kernel.name, task.spec, resources).evaluator
            baseline = evaluator.baseline()
            peak = measured_peaks(resources, evaluator.arch) if evaluator.gpu_name else None
            floor = roofline_floor_ms(bytes_moved, flop_count, *peak) if peak else None
            entry.update(gpu=evaluator.gpu_name, baseline_ms=baseline.median_ms if baseline else None,
                         bytes=bytes_moved, flops=flop_count, floor_ms=floor,
                         baseline_fraction=_fraction(floor, baseline.median_ms if baseline else None),
                         no_device=None if evaluator.has_device else evaluator.no_device_reason)
            given = ApplierInput(source, kernel.name, target.launch, target.constants,
                                 DeviceLimits.of(evaluator.device))
            for applier in APPLIERS:
                name = type(applier).__name__
                try:
                    rewrites = rewrites_of(applier, given)
                except Exception as error:  # noqa: BLE001 - an applier bug is exactly what this reports
                    entry["rewrites"].append({"applier": name, "technique": applier.technique, "note": "",
                                              "outcome": "applier_error", "reason": f"{type(error).__name__}: {error}"})
                    continue
                if not rewrites:
                    continue
                candidates = [Candidate(r.source, r.launch, (applier.technique,)) for r in rewrites]
                for rewrite, evaluation in zip(rewrites, evaluator.evaluate_many(candidates), strict=True):
                    time_ms = evaluation.timing.median_ms if evaluation.timing else None
                    entry["rewrites"].append({
                        "applier": name, "technique": applier.technique, "note": rewrite.note,
                        "outcome": evaluation.outcome, "speedup": evaluation.speedup, "time_ms": time_ms,
                        "roofline_fraction": _fraction(floor, time_ms) if evaluation.verified else None,
                        "reason": evaluation.reason,
                        "launch": {"grid": list(rewrite.launch.grid), "block": list(rewrite.launch.block),
                                   "shared_bytes": rewrite.launch.shared_bytes},
                    })
        entry["wall_s"] = round(time.monotonic() - started, 1)
        reports.append(entry)
    return reports


def _fraction(floor: float | None, time_ms: float | None) -> float | None:
    return floor / time_ms if floor is not None and time_ms else None


def run(args: argparse.Namespace) -> int:
    env, home = dict(os.environ), Path.home()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failed = False
    for raw in args.tasks:
        directory = Path(raw)
        try:
            task = load_task(directory)
            reports = verify_task(task, directory, env, home)
        except InputError as error:
            reports = [{"task": directory.name, "split": split_of(directory), "family": None, "kernel": None,
                        "error": str(error), "rewrites": []}]
            failed = True
        (out / f"{split_of(directory)}-{directory.name}.json").write_text(json.dumps(reports, indent=2) + "\n",
                                                                     encoding="utf-8")
        for report in reports:
            outcomes = Counter(r["outcome"] for r in report["rewrites"])
            failed = failed or any(outcomes[o] for o in (*FAILED, "applier_error"))
            print(f"{directory.name}/{report['kernel']}: {len(report['rewrites'])} rewrites "
                  f"{dict(outcomes) or ''} {report.get('error') or report.get('no_device') or ''}".rstrip(),
                  file=sys.stderr, flush=True)
    return 1 if failed else 0


def merge(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    entries: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.json")):
        if path.name == "appliers.json":
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        entries.extend(data if isinstance(data, list) else [])
    (folder / "appliers.json").write_text(json.dumps(entries, indent=2) + "\n", encoding="utf-8")
    (folder / "appliers.md").write_text(markdown(entries), encoding="utf-8")
    print(folder / "appliers.md")
    return 0


def markdown(entries: list[dict[str, Any]]) -> str:
    gpu = next((e["gpu"] for e in entries if e.get("gpu")), None)
    lines = [f"# Applier rewrites on {len(entries)} kernels", "", f"GPU: {gpu or 'none (rewrites compiled only)'}", "",
             "Rows of the held-out `test` split are here to catch wrong, crashing or non-compiling rewrites "
             "on kernels nobody tuned for; do not tune appliers to them (issue 11).", "",
             "## Per applier", "",
             "| applier | kernels matched | rewrites | faster | slower | wrong | compile error | crashed/timeout "
             "| unverified/other | best speedup (kernel) |", "|---|---|---|---|---|---|---|---|---|---|"]
    per_applier: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
    for entry in entries:
        for rewrite in entry["rewrites"]:
            per_applier[rewrite["applier"]].append((entry, rewrite))
    for name in [type(a).__name__ for a in APPLIERS] + sorted(set(per_applier) - {type(a).__name__ for a in APPLIERS}):
        pairs = per_applier.get(name, [])
        outcomes = Counter(r["outcome"] for _, r in pairs)
        kernels = {(e["split"], e["task"], e["kernel"]) for e, _ in pairs}
        speedups = [(r["speedup"], e["task"]) for e, r in pairs if r["outcome"] == "faster" and r.get("speedup")]
        best = max(speedups, default=None)
        other = sum(outcomes.values()) - sum(outcomes[o] for o in ("faster", "slower", "wrong", "compile_error",
                                                                   "crashed", "timeout"))
        lines.append(f"| {name} | {len(kernels)} | {len(pairs)} | {outcomes['faster']} | {outcomes['slower']} "
                     f"| {outcomes['wrong']} | {outcomes['compile_error']} | {outcomes['crashed'] + outcomes['timeout']} "
                     f"| {other} | {f'{best[0]:.2f}x ({best[1]})' if best else '-'} |")
    lines += ["", "## Per kernel: the best verified single rewrite", "",
              "| split | family | task | baseline ms | baseline roofline | appliers that matched | best rewrite "
              "| speedup | roofline |", "|---|---|---|---|---|---|---|---|---|"]
    for entry in sorted(entries, key=lambda e: (e["split"], e.get("family") or "", e["task"])):
        matched = sorted({r["applier"] for r in entry["rewrites"]})
        verified = [r for r in entry["rewrites"] if r["outcome"] == "faster"]
        best_rewrite = max(verified, key=lambda r: r.get("speedup") or 0.0, default=None)
        lines.append(
            f"| {entry['split']} | {entry.get('family') or '-'} | {entry['task']} | {_num(entry.get('baseline_ms'))} "
            f"| {_pct(entry.get('baseline_fraction'))} | {', '.join(matched) or entry.get('error') or 'none'} "
            f"| {best_rewrite['applier'] + ': ' + best_rewrite['note'] if best_rewrite else '-'} "
            f"| {_num(best_rewrite['speedup'], 'x') if best_rewrite else '-'} "
            f"| {_pct(best_rewrite.get('roofline_fraction')) if best_rewrite else '-'} |")
    failures = [(e, r) for e in entries for r in e["rewrites"] if r["outcome"] in (*FAILED, "applier_error")]
    lines += ["", f"## Failed rewrites ({len(failures)})", ""]
    if failures:
        lines += ["| task | applier | note | outcome | reason |", "|---|---|---|---|---|"]
        for entry, rewrite in failures:
            reason = " ".join(str(rewrite.get("reason") or "").split())[:300].replace("|", "\\|")
            lines.append(f"| {entry['split']}/{entry['task']} | {rewrite['applier']} | {rewrite['note']} "
                         f"| {rewrite['outcome']} | {reason} |")
    else:
        lines.append("None.")
    return "\n".join(lines) + "\n"


def _num(value: object, suffix: str = "") -> str:
    return f"{value:.4g}{suffix}" if isinstance(value, float) else "-"


def _pct(value: object) -> str:
    return f"{value:.0%}" if isinstance(value, float) else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="verify every applier's rewrites of the given task directories")
    run_parser.add_argument("tasks", nargs="+")
    run_parser.add_argument("--out", required=True)
    run_parser.set_defaults(handler=run)
    merge_parser = commands.add_parser("merge", help="tabulate the per-task reports of a folder")
    merge_parser.add_argument("dir")
    merge_parser.set_defaults(handler=merge)
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except InputError as error:
        print(f"verify_appliers: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
