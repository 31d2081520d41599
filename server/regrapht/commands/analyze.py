"""`regrapht analyze FILE.cu [--json] [--confirm]`: the editor's static findings on the command line.

Plain output is compiler-style `file:line:col: severity: message [R003 technique]`; `--json`
prints the list described in docs/cli-contract.md (1-based lines and columns). `--confirm`
compiles the file to PTX with nvcc and applies the compiler's verdicts as the editor does
(rules/confirm.py: "Confirmed by nvcc: ..." or downgraded to a hint); without nvcc, or when the
file does not compile, a warning says so and the findings stay as they are. Exit 0 whether or
not there are findings; an unreadable file raises `InputError` (exit 2).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from regrapht.commands.compiling import add_compile_arguments, flags_of
from regrapht.inputs import read_source
from regrapht.limits import DEFAULT_ARCH
from regrapht.rules import Finding, analyze_text
from regrapht.rules.confirm import confirm_findings
from regrapht.validate.ptx import ptx_facts


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("analyze", help="static performance findings for a .cu file")
    parser.add_argument("file", help="the .cu/.cuh file")
    parser.add_argument("--json", action="store_true", help="print findings as JSON")
    parser.add_argument("--confirm", action="store_true",
                        help="check R001/R002/R007/R008/R015 against the PTX nvcc generates (needs nvcc)")
    parser.add_argument("--arch", default=DEFAULT_ARCH, help=f"the arch --confirm compiles for ({DEFAULT_ARCH})")
    add_compile_arguments(parser)
    parser.set_defaults(handler=run)


def finding_json(finding: Finding) -> dict[str, object]:
    found = _finding_json(finding)
    if finding.related:
        found["related"] = [{"line": r.span.start.line + 1, "column": r.span.start.character + 1,
                             "end_line": r.span.end.line + 1, "end_column": r.span.end.character + 1,
                             "message": r.message} for r in finding.related]
    return found


def _finding_json(finding: Finding) -> dict[str, object]:
    return {
        "rule": finding.rule,
        "severity": finding.severity,
        "line": finding.span.start.line + 1,
        "column": finding.span.start.character + 1,
        "end_line": finding.span.end.line + 1,
        "end_column": finding.span.end.character + 1,
        "kernel": finding.kernel,
        "message": finding.message,
        "technique": finding.technique,
        "doc": finding.doc,
    }


def _confirmed(findings: list[Finding], text: str, path: Path, arch: str, err: TextIO,
               args: argparse.Namespace) -> tuple[Finding, ...]:
    """--confirm: the compile stack is imported here, so a plain `analyze` does not load it."""
    from regrapht.validate.compiler import Compiler, find_demangler, find_nvcc

    nvcc = find_nvcc(os.environ)
    if nvcc is None:
        print(f"{path}: warning: --confirm: nvcc not found on PATH or in $CUDA_HOME/bin; findings unconfirmed",
              file=err)
        return tuple(findings)
    facts = ptx_facts(Compiler(nvcc, demangler=find_demangler(nvcc, os.environ)), text, path.resolve(), arch,
                      flags_of(args, path, err))
    if facts is None:
        print(f"{path}: warning: --confirm: nvcc could not compile the file; findings unconfirmed", file=err)
        return tuple(findings)
    return confirm_findings(findings, facts)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    text, warnings = read_source(Path(args.file))
    for warning in warnings:
        print(f"{args.file}: warning: {warning}", file=err)
    findings = analyze_text(text)
    if getattr(args, "confirm", False):
        findings = list(_confirmed(findings, text, Path(args.file), getattr(args, "arch", DEFAULT_ARCH), err, args))
    if args.json:
        json.dump([finding_json(f) for f in findings], out, indent=2)
        out.write("\n")
        return 0
    for finding in findings:
        start = finding.span.start
        print(f"{args.file}:{start.line + 1}:{start.character + 1}: {finding.severity}: {finding.message} "
              f"[{finding.rule} {finding.technique}]", file=out)
    return 0
