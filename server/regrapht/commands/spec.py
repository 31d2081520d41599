"""`regrapht spec infer FILE --kernel NAME [-o OUT]` and `regrapht spec check SPEC`.

`infer` writes a best-effort spec from the kernel's launch site (stdout, or OUT; refuses to
overwrite an existing file without `--force`); `check` parses a spec and prints each kernel's
resolved launch and buffer sizes, or the error naming its key (exit 2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from regrapht.errors import InputError
from regrapht.spec.infer import infer_spec
from regrapht.spec.model import load_spec
from regrapht.spec.resolve import resolve
from regrapht.validate.opening import read_source


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("spec", help="write or check kernel benchmark specs (*.regrapht.toml)")
    actions = parser.add_subparsers(dest="spec_command", required=True, metavar="ACTION")
    infer = actions.add_parser("infer", help="infer a spec from a launch site in FILE")
    infer.add_argument("file")
    infer.add_argument("--kernel", required=True)
    infer.add_argument("-o", "--output", help="write here instead of stdout")
    infer.add_argument("--force", action="store_true", help="overwrite OUTPUT if it exists")
    infer.set_defaults(handler=run_infer)
    check = actions.add_parser("check", help="parse a spec and show what it resolves to")
    check.add_argument("spec")
    check.set_defaults(handler=run_check)


def run_infer(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    text = infer_spec(read_source(Path(args.file)), args.kernel, file=args.file)
    if args.output is None:
        out.write(text)
        return 0
    target = Path(args.output)
    if target.is_dir():
        raise InputError("is a directory; give the spec file to write, e.g. "
                         f"{target / 'KERNEL.regrapht.toml'}", file=str(target))
    if not target.parent.is_dir():
        raise InputError(f"the folder {target.parent} does not exist", file=str(target))
    if target.exists() and not args.force:
        raise InputError("already exists (use --force to overwrite)", file=str(target))
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror or error}", file=str(target)) from error
    print(f"wrote {target}", file=sys.stderr)
    return 0


def run_check(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    spec = load_spec(Path(args.spec))
    for kernel in spec.kernels:
        resolved = resolve(kernel)
        buffers = ", ".join(f"{b.name}[{b.count}] {b.role}" for b in resolved.buffers)
        print(f"{kernel.signature()}: grid {resolved.grid} block {resolved.block} "
              f"shared {resolved.shared_bytes}; {buffers}", file=out)
    return 0
