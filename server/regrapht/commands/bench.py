"""`regrapht bench FILE.cu --kernel NAME [--spec SPEC] [--json]`: compile, resources, timing.

Per docs/cli-contract.md: JSON keys kernel, arch, gpu, resources{registers,
shared_bytes, spill_bytes, local_bytes}, occupancy, time_ms, achieved_gbps, peak_gbps (null
without a device), plus additions. Exit 0 on success, 1 when the file does not compile, 2 on
bad input (via `InputError`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from regrapht.commands.compiling import add_compile_arguments, flags_of
from regrapht.commands.from_capture import add_capture_argument, spec_argument
from regrapht.inputs import read_source
from regrapht.spec.resolve import spec_launch
from regrapht.validate.bench import bench, slow_kernel_message
from regrapht.validate.cache_dir import default_cache_dir
from regrapht.validate.evaluator import CudaEvaluator, OriginalCompileError
from regrapht.validate.opening import open_evaluator, start_worker
from regrapht.validate.profile_report import strongest_first
from regrapht.validate.profiler import Profile, ProfileFailure, find_ncu, profile_kernel
from regrapht.validate.types import Candidate


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("bench", help="compile a kernel, report resources and time it per its spec")
    parser.add_argument("file", help="the .cu file")
    parser.add_argument("--kernel", required=True, help="the __global__ kernel (as named in the spec)")
    parser.add_argument("--spec", help="the spec (default: FILE's .regrapht.toml beside it)")
    parser.add_argument("--arch", default="", help="e.g. sm_90 (default: the device's, else sm_90)")
    parser.add_argument("--no-run", action="store_true", help="compile and report resources only")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--profile", action="store_true",
                        help="also profile one launch with Nsight Compute (ncu): throughput, occupancy, stalls, rules")
    add_capture_argument(parser)
    add_compile_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    env = dict(os.environ)
    cache_dir = default_cache_dir(env)
    spec = spec_argument(args, Path(args.file))
    worker = None if args.no_run else start_worker(env)
    try:
        try:
            evaluator = open_evaluator(Path(args.file), args.kernel, spec=spec,
                                       arch=args.arch or None, env=env, cache_dir=cache_dir, worker=worker,
                                       flags=flags_of(args, Path(args.file), err))
        except OriginalCompileError as error:
            print(f"regrapht: {error}", file=err)
            return 1
        for diagnostic in evaluator.original.diagnostics:
            print(str(diagnostic), file=err)
        report = bench(evaluator, measure=not args.no_run)
        profile = profile_for(args, evaluator, env) if args.profile else None
    finally:
        if worker is not None:
            worker.close()
    data = report.to_json()
    if profile is not None:
        data["profile"] = profile.to_json()
    if args.json:
        json.dump(data, out, indent=2)
        out.write("\n")
        return 0
    res = data["resources"]
    assert isinstance(res, dict)
    print(f"{report.kernel} ({report.resources.name}) for {report.arch}", file=out)
    if not evaluator.flags.empty:
        print(f"  compiled with {evaluator.flags.describe()}", file=out)
    print(f"  registers {res['registers']}, static shared {res['shared_bytes']} B, spills "
          f"{res['spill_bytes']} B, local {res['local_bytes']} B", file=out)
    if report.occupancy is not None:
        print(f"  occupancy {report.occupancy.occupancy:.0%} ({report.occupancy.blocks_per_sm} blocks/SM, "
              f"limited by {report.occupancy.limited_by})", file=out)
    if report.timing is not None:
        t = report.timing
        print(f"  {t.median_ms:.4f} ms median of {t.runs} (p10 {t.p10_ms:.4f}, p90 {t.p90_ms:.4f}) on {report.gpu}",
              file=out)
        if message := slow_kernel_message(report):
            print(f"  {message}", file=out)
    else:
        print(f"  not timed: {report.reason}", file=out)
    if profile is not None:
        for line in profile_lines(profile):
            print(f"  {line}", file=out)
    return 0


def profile_for(args: argparse.Namespace, evaluator: CudaEvaluator, env: dict[str, str]) -> Profile | ProfileFailure:
    ncu = find_ncu(env)
    if ncu is None:
        return ProfileFailure("ncu (Nsight Compute) not found on PATH or beside nvcc")
    if not evaluator.has_device:
        return ProfileFailure(evaluator.no_device_reason or "no CUDA device")
    source, _warnings = read_source(Path(args.file))
    return profile_kernel(evaluator, Candidate(source, spec_launch(evaluator.kernel)), ncu, env=env)


def profile_lines(profile: Profile | ProfileFailure) -> list[str]:
    if isinstance(profile, ProfileFailure):
        return [f"not profiled: {profile.reason}"]
    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.0f}%"
    lines = [f"Nsight Compute: DRAM {pct(profile.dram_pct)} of peak, SM {pct(profile.sm_pct)}, "
             f"achieved occupancy {pct(profile.occupancy_pct)}"]
    if profile.stalls:
        lines.append("top stalls (cycles per issued instruction): "
                     + ", ".join(f"{reason} {value:g}" for reason, value in profile.stalls))
    # as the card reads them: the largest estimate first, ncu's notes about itself left out
    lines += [f"{rule.kind} {rule.shown()}" + (f" [{rule.technique}]" if rule.technique else "")
              for rule in strongest_first(profile.rules)]
    return lines
