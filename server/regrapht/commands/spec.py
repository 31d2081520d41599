"""`regrapht spec infer FILE --kernel NAME [-o OUT]` and `regrapht spec check SPEC`.

`infer` writes a best-effort spec from the kernel's launch site (stdout, or OUT; refuses to
overwrite an existing file without `--force`), with the file's compile flags (typedefs in the
project's headers; a template's instances from the compiled original); `check` parses a spec and
prints each kernel's resolved launch and buffer sizes, or the error naming its key (exit 2); with
the kernel's source (`--source`, else the `.cu`/`.cuh` beside the spec) it also rejects what the
access-range proofs show wrong (spec/proofs.py) and lists the spec's guesses.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from regrapht.commands.compiling import add_compile_arguments, flags_of
from regrapht.errors import InputError
from regrapht.spec.infer import infer_spec
from regrapht.spec.infer_types import HEADER_SUFFIXES, including_source
from regrapht.spec.model import load_spec
from regrapht.spec.proofs import check_against_source
from regrapht.spec.resolve import resolve
from regrapht.validate.opening import read_source

SOURCE_SUFFIXES = (".cu", ".cuh")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("spec", help="write or check kernel benchmark specs (*.regrapht.toml)")
    actions = parser.add_subparsers(dest="spec_command", required=True, metavar="ACTION")
    infer = actions.add_parser("infer", help="infer a spec from a launch site in FILE")
    infer.add_argument("file")
    infer.add_argument("--kernel", required=True)
    infer.add_argument("-o", "--output", help="write here instead of stdout")
    infer.add_argument("--force", action="store_true", help="overwrite OUTPUT if it exists")
    add_compile_arguments(infer)
    infer.set_defaults(handler=run_infer)
    check = actions.add_parser("check", help="parse a spec and show what it resolves to")
    check.add_argument("spec")
    check.add_argument("--source", help="the kernels' source file (default: the .cu or .cuh beside the spec)")
    check.set_defaults(handler=run_check)


def _instances(path: Path, text: str, kernel: str, args: argparse.Namespace) -> list[str]:
    """The compiled original's kernel signatures, for a template named without arguments."""
    if "<" in kernel:
        return []
    from regrapht.cuda.view import kernel_view

    view = kernel_view(text, kernel)
    if view is None or not view.template_parameters:
        return []
    import os

    from regrapht.validate.cache_dir import default_cache_dir
    from regrapht.validate.compiler import DEFAULT_ARCH, Compiler

    compiler = Compiler.found(os.environ, default_cache_dir(os.environ))
    if compiler is None:
        return []
    result = compiler.compile(text, arch=DEFAULT_ARCH, file=str(path), include_dirs=(str(path.resolve().parent),),
                              flags=flags_of(args, path))
    return [k.name for k in result.kernels.values()] if result.ok else []


def run_infer(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    path = Path(args.file)
    source = read_source(path)
    flags = flags_of(args, path)
    context = None
    if path.suffix in HEADER_SUFFIXES:  # a header's kernel: its launches are in a .cu that includes it
        from regrapht.commands.compiling import compile_setup_of

        database = compile_setup_of(args).lookup(path).database
        if database is not None:
            from regrapht.validate.compile_db import load_database

            including = including_source(path, [e.file for e in load_database(database).entries])
            if including is not None:
                print(f"regrapht: note: launches read from {including}, which includes {path.name}", file=sys.stderr)
                context = read_source(including)
    text = infer_spec(source, args.kernel, file=args.file, include_dirs=flags.include_dirs,
                      instances=_instances(path, source, args.kernel, args), context=context,
                      compile_defines=flags.defines)
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
    spec_file = Path(args.spec)
    spec = load_spec(spec_file)
    source_file = Path(args.source) if getattr(args, "source", None) else _source_beside(spec_file)
    source = read_source(source_file) if source_file is not None else None
    for kernel in spec.kernels:
        resolved = resolve(kernel)
        if source is not None:
            check_against_source(kernel, source)
        buffers = ", ".join(f"{b.name}[{b.count}] {b.role}" for b in resolved.buffers)
        print(f"{kernel.signature()}: grid {resolved.grid} block {resolved.block} "
              f"shared {resolved.shared_bytes}; {buffers}", file=out)
        if kernel.guessed:
            print(f"  guessed (not proven from the kernel): {', '.join(kernel.guessed)}", file=out)
    if source_file is None:
        print("regrapht: note: no source beside the spec (give --source): the counts and roles were not held "
              "against the kernel", file=sys.stderr)
    return 0


def _source_beside(spec_file: Path) -> Path | None:
    stem = spec_file.name.removesuffix(".regrapht.toml")
    for suffix in SOURCE_SUFFIXES:
        candidate = spec_file.with_name(stem + suffix)
        if candidate.is_file():
            return candidate
    return None
