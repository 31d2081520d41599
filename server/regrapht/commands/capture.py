"""`regrapht capture [--kernel REGEX] [--launches N] [--data] [--out DIR] -- CMD ARGS...`.

Runs CMD with ReGraphT's CUPTI injection library and writes a capture directory: the launches it
recorded, their data with `--data`, one benchmark spec per kernel and launch shape, and
`capture.json` (docs/capture.md). The program's stdin, stdout and stderr are the terminal's;
the summary goes to stderr after it ends. Exit code: the program's (a signal as 128 + N); 1 when
the capture could not start (no GPU, no CUPTI, no compiler) or the program succeeded but nothing
could be captured (CUPTI refused, the library never started); 2 on bad options.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from regrapht.capture.run import (
    DEFAULT_LAUNCHES,
    DEFAULT_MAX_BYTES,
    DEFAULT_TOTAL_BYTES,
    CaptureOptions,
    capture,
    default_out,
)
from regrapht.validate.cache_dir import default_cache_dir


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "capture", help="run a program and turn the kernels it launches into benchmark specs with its real data",
        description="Run CMD with ReGraphT's CUPTI injection library loaded (CUDA_INJECTION64_PATH) and record "
                    "every matching kernel launch: grid, block, shared memory, arguments, the allocations "
                    "they point into and, with --data, their contents before and after. Writes one spec per "
                    "kernel and launch shape under OUT/specs/.")
    parser.add_argument("--kernel", metavar="REGEX", help="only kernels whose mangled or demangled name matches")
    parser.add_argument("--launches", type=int, default=DEFAULT_LAUNCHES, metavar="N",
                        help=f"launches recorded per kernel (default {DEFAULT_LAUNCHES})")
    parser.add_argument("--data", action="store_true",
                        help="snapshot each argument's allocation before and after the launch (exact replays)")
    parser.add_argument("--out", metavar="DIR", help="capture directory (default .regrapht/captures/<program>)")
    parser.add_argument("--max-bytes", type=int, default=DEFAULT_MAX_BYTES,
                        help=f"largest allocation snapshotted with --data (default {DEFAULT_MAX_BYTES >> 20} MiB)")
    parser.add_argument("--total-bytes", type=int, default=DEFAULT_TOTAL_BYTES,
                        help=f"all snapshots together (default {DEFAULT_TOTAL_BYTES >> 30} GiB)")
    parser.add_argument("--sources", metavar="DIR",
                        help="where the kernels' .cu files are, for parameter names (default: the current folder)")
    parser.add_argument("--rtol", type=float, help="tolerance of every spec written (default: the spec format's; "
                                                    "1e-3 for a float reduction)")
    parser.add_argument("--atol", type=float, help="absolute tolerance of every spec written")
    parser.add_argument("program", nargs=argparse.REMAINDER, metavar="-- CMD ARGS...",
                        help="the program to run and its arguments")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, err: TextIO | None = None) -> int:
    err = err or sys.stderr
    command = list(args.program)
    if command and command[0] == "--":
        command = command[1:]
    out = Path(args.out) if args.out else default_out(command or ["program"], Path.cwd())
    options = CaptureOptions(tuple(command), out, args.kernel, args.launches, args.data, args.max_bytes,
                             args.total_bytes, Path(args.sources) if args.sources else None, args.rtol, args.atol)
    env = dict(os.environ)
    outcome = capture(options, env, default_cache_dir(env))
    for line in outcome.lines:
        print(line, file=err)
    if outcome.error:
        print(f"regrapht capture: error: {outcome.error}", file=err)
    return outcome.exit_code
