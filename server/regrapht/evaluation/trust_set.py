"""The labelled trust set of issue 27: real third-party CUDA split into a train and a test half.

Owns which code bases belong to the set (`CODE_BASES`, fetched by
scripts/fetch-labelled-corpus.sh into tests/data/realworld/), the deterministic split of their
files (`split_of`: the first byte of the sha256 of the path), the manifest that pins every file's
sha256 (tests/data/realworld/trust/manifest.tsv), and the tally of three-way labels (`fix`: right
and worth fixing, `right`: right but not worth the effort, `wrong`) per rule and severity that
docs/benchmarks.md shows. The labels themselves use labelled_findings' format and loader.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from regrapht.errors import InputError
from regrapht.evaluation.labelled_findings import Label
from regrapht.rules import Finding

Split = Literal["train", "test"]
CODE_BASES = ("ggml-cuda", "deepspeed", "lightgbm", "theano", "warp")
THREE_WAY = ("fix", "right", "wrong")
COUNTED = ("warning", "error")


def split_of(path: str) -> Split:
    """`path` relative to tests/data/realworld/ ("warp/warp/native/warp.cu"): test when the first
    byte of its sha256 is below 128, so about half of every code base, fixed before any labelling."""
    return "test" if hashlib.sha256(path.encode("utf-8")).digest()[0] < 128 else "train"


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(path: Path) -> dict[str, tuple[str, Split]]:
    """`relative path -> (sha256, split)` from manifest.tsv (`path<TAB>sha256<TAB>split`)."""
    entries: dict[str, tuple[str, Split]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or parts[2] not in ("train", "test") or len(parts[1]) != 64:
            raise InputError("expected `path<TAB>sha256<TAB>train|test`", file=str(path), line=number)
        entries[parts[0]] = (parts[1], "test" if parts[2] == "test" else "train")
    return entries


@dataclass(frozen=True)
class Tally:
    """One rule at one severity class ("reported": warnings and errors; "hint": hints)."""

    rule: str
    kind: Literal["reported", "hint"]
    total: int
    fix: int
    right: int
    wrong: int
    unlabelled: int

    @property
    def right_share(self) -> float:
        return (self.fix + self.right) / self.total if self.total else 1.0


def tally(labels: Iterable[Label], findings: dict[str, list[Finding]]) -> list[Tally]:
    """Per rule and kind: the findings and how they are labelled (an unlabelled finding is neither
    right nor wrong: the table shows it so that it gets a label, it never passes as right)."""
    verdicts = {(label.location, label.rule): label.verdict for label in labels}
    counts: Counter[tuple[str, str, str]] = Counter()
    for file, found in findings.items():
        for finding in found:
            if finding.severity not in (*COUNTED, "hint"):
                continue
            kind = "reported" if finding.severity in COUNTED else "hint"
            verdict = verdicts.get((f"{file}:{finding.span.start.line + 1}", finding.rule), "unlabelled")
            counts[(finding.rule, kind, str(verdict))] += 1
    rows = []
    for rule, kind in sorted({(r, k) for r, k, _ in counts}):
        fix, right, wrong = (counts[(rule, kind, v)] for v in THREE_WAY)
        unlabelled = counts[(rule, kind, "unlabelled")]
        total = fix + right + wrong + unlabelled
        rows.append(Tally(rule, "reported" if kind == "reported" else "hint", total, fix, right, wrong,
                          unlabelled))
    return rows


def unlabelled(labels: Iterable[Label], findings: dict[str, list[Finding]]) -> list[tuple[str, Finding]]:
    """Warnings, errors and hints of `findings` without a label: `(location, finding)`."""
    known = {(label.location, label.rule) for label in labels}
    return [(f"{file}:{f.span.start.line + 1}", f) for file, found in findings.items() for f in found
            if f.severity in (*COUNTED, "hint") and (f"{file}:{f.span.start.line + 1}", f.rule) not in known]
