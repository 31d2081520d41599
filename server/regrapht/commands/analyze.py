"""`regrapht analyze FILE.cu [--json]`: the editor's static findings on the command line.

Plain output is compiler-style `file:line:col: severity: message [R003 technique]`; `--json`
prints the list described in docs/cli-contract.md (1-based lines and columns). Exit 0
whether or not there are findings; an unreadable file raises `InputError` (exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from regrapht.inputs import read_source
from regrapht.rules import Finding, analyze_text


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("analyze", help="static performance findings for a .cu file")
    parser.add_argument("file", help="the .cu/.cuh file")
    parser.add_argument("--json", action="store_true", help="print findings as JSON")
    parser.set_defaults(handler=run)


def finding_json(finding: Finding) -> dict[str, object]:
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


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    text, warnings = read_source(Path(args.file))
    for warning in warnings:
        print(f"{args.file}: warning: {warning}", file=err)
    findings = analyze_text(text)
    if args.json:
        json.dump([finding_json(f) for f in findings], out, indent=2)
        out.write("\n")
        return 0
    for finding in findings:
        start = finding.span.start
        print(f"{args.file}:{start.line + 1}:{start.character + 1}: {finding.severity}: {finding.message} "
              f"[{finding.rule} {finding.technique}]", file=out)
    return 0
