"""`regrapht check ORIGINAL.cu CANDIDATE.cu --kernel NAME [--spec S] [--json]`: the differential
check and timing of one candidate against the original, as the optimizer runs it.

The candidate's launch configuration is the original spec's unless `--grid/--block/
--shared-bytes` (spec expressions) or a spec beside the candidate file gives another. Exit 0
when the candidate is verified (correct and timed), 1 otherwise (wrong, crashed, timed out,
rejected, not compiled, or unverified for want of a device), 2 on bad input.
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
from regrapht.errors import InputError
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import KernelSpec, load_spec, spec_path_for
from regrapht.spec.resolve import resolve, spec_launch
from regrapht.validate.cache_dir import default_cache_dir
from regrapht.validate.opening import open_evaluator, read_source, start_worker
from regrapht.validate.types import Candidate


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("check", help="check a candidate kernel against the original and time both")
    parser.add_argument("original", help="the original .cu file")
    parser.add_argument("candidate", help="the candidate .cu file (the whole new file)")
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--spec", help="the spec (default: ORIGINAL's .regrapht.toml beside it)")
    parser.add_argument("--arch", default="")
    parser.add_argument("--grid", nargs="+", help="the candidate's grid expressions")
    parser.add_argument("--block", nargs="+", help="the candidate's block expressions")
    parser.add_argument("--shared-bytes", help="the candidate's dynamic shared memory expression")
    parser.add_argument("--json", action="store_true")
    add_capture_argument(parser)
    add_compile_arguments(parser)
    parser.set_defaults(handler=run)


def candidate_launch(args: argparse.Namespace, default: LaunchConfig) -> LaunchConfig:
    beside = spec_path_for(Path(args.candidate))
    base = spec_launch(load_spec(beside).kernel(args.kernel)) if beside.is_file() else default
    return LaunchConfig(grid=tuple(args.grid) if args.grid else base.grid,
                        block=tuple(args.block) if args.block else base.block,
                        shared_bytes=args.shared_bytes or base.shared_bytes)


# The spec key `resolve` names for a candidate launch -> the flag that wrote it.
_LAUNCH_FLAGS = {"launch.grid": "--grid", "launch.block": "--block", "launch.shared_bytes": "--shared-bytes"}


def check_launch_flags(args: argparse.Namespace, kernel: KernelSpec, launch: LaunchConfig) -> None:
    """A `--grid/--block/--shared-bytes` expression that does not evaluate with the kernel's
    scalars (an unknown name, bad syntax, a dimension out of range) is bad input naming the flag
    (exit 2), not a candidate that failed its check (exit 1)."""
    if not (args.grid or args.block or args.shared_bytes):
        return
    try:
        resolve(kernel, launch=launch)
    except InputError as error:
        key = error.key or ""
        for prefix, flag in _LAUNCH_FLAGS.items():
            if key.startswith(prefix):
                raise InputError(error.message, key=flag + key[len(prefix):]) from error
        raise  # the spec's own values failed: already reported by their key


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    env = dict(os.environ)
    candidate_text = read_source(Path(args.candidate))
    spec = spec_argument(args, Path(args.original))
    worker = start_worker(env)
    try:
        evaluator = open_evaluator(Path(args.original), args.kernel, spec=spec,
                                   arch=args.arch or None, env=env, cache_dir=default_cache_dir(env), worker=worker,
                                   flags=flags_of(args, Path(args.original), err))
        k = evaluator.kernel
        launch = candidate_launch(args, spec_launch(k))
        check_launch_flags(args, k, launch)
        evaluation = evaluator.evaluate(Candidate(source=candidate_text, launch=launch))
        baseline = evaluator.baseline() if evaluation.verified else None
    finally:
        if worker is not None:
            worker.close()
    data = {
        "kernel": k.name, "arch": evaluator.arch, "gpu": evaluator.gpu_name,
        "outcome": evaluation.outcome, "verified": evaluation.verified, "reason": evaluation.reason,
        "time_ms": evaluation.timing.median_ms if evaluation.timing else None,
        "baseline_ms": baseline.median_ms if baseline else None,
        "speedup": evaluation.speedup, "details": evaluation.details,
    }
    if args.json:
        json.dump(data, out, indent=2, default=str)
        out.write("\n")
    else:
        line = f"{args.candidate}: {evaluation.outcome}"
        if evaluation.reason:
            line += f": {evaluation.reason}"
        if evaluation.timing is not None and baseline is not None:
            line += (f" ({evaluation.timing.median_ms:.4f} ms vs {baseline.median_ms:.4f} ms, "
                     f"speedup {evaluation.speedup:.2f}x)")
        print(line, file=out)
    if not evaluation.verified:
        print(f"regrapht: {args.candidate}: {evaluation.outcome}: {evaluation.reason}", file=err)
        return 1
    return 0
