"""Rule precision on a labelled corpus of real expert CUDA (tests/data/realworld/).

Owns the label format (`labels.tsv`: `path:line<TAB>rule<TAB>verdict<TAB>reason`, verdicts tp /
fp / minor, or the trust set's three-way fix / right / wrong of issue 27), running the rules over the corpus's files, and the comparison: which labelled true
positives disappeared, which labelled false positives came back as warnings or errors, which
warnings or errors carry no label, and the per-rule precision table docs/benchmarks.md shows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from regrapht.cuda.parse import decode_source
from regrapht.errors import InputError
from regrapht.rules import Finding, analyze_text

# tp: right and worth a warning; fp: wrong; minor: right but a hint at most (issue 14's labels).
# The trust set (evaluation/trust_set.py): fix (right and worth fixing), right (right, not worth
# the effort), wrong.
Verdict = Literal["tp", "fp", "minor", "fix", "right", "wrong"]
VERDICTS: tuple[Verdict, ...] = ("tp", "fp", "minor", "fix", "right", "wrong")
REPORTED = ("warning", "error")  # the severities the precision target counts
SOURCE_SUFFIXES = (".cu", ".cuh")


@dataclass(frozen=True)
class Label:
    location: str  # "ggml-cuda/wkv.cu:28"
    rule: str
    verdict: Verdict
    reason: str
    line_number: int  # in labels.tsv, for messages


@dataclass(frozen=True)
class Reported:
    location: str
    rule: str
    severity: str
    message: str


@dataclass
class Comparison:
    reported: list[Reported] = field(default_factory=list)  # warnings and errors on the corpus
    lost_true_positives: list[Label] = field(default_factory=list)
    returned_false_positives: list[tuple[Label, Reported]] = field(default_factory=list)
    unlabelled: list[Reported] = field(default_factory=list)
    false_errors: list[tuple[Label, Reported]] = field(default_factory=list)  # errors labelled other than tp

    def table(self, labels: Iterable[Label]) -> list[tuple[str, int, int, int]]:
        """Per rule: (rule, warnings+errors reported, right, wrong); right = labelled tp."""
        verdicts = {(label.location, label.rule): label.verdict for label in labels}
        right: Counter[str] = Counter()
        wrong: Counter[str] = Counter()
        for found in self.reported:
            if verdicts.get((found.location, found.rule)) == "tp":
                right[found.rule] += 1
            else:
                wrong[found.rule] += 1
        rules = sorted(set(right) | set(wrong))
        return [(rule, right[rule] + wrong[rule], right[rule], wrong[rule]) for rule in rules]


def load_labels(path: Path) -> list[Label]:
    labels = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 4 or parts[2] not in VERDICTS or ":" not in parts[0] or not parts[3].strip():
            raise InputError(f"expected `path:line<TAB>rule<TAB>{'|'.join(VERDICTS)}<TAB>reason`", file=str(path),
                             line=number)
        verdict = next(v for v in VERDICTS if v == parts[2])
        labels.append(Label(parts[0], parts[1], verdict, parts[3], number))
    return labels


def corpus_findings(root: Path, subdirectories: Iterable[str]) -> dict[str, list[Finding]]:
    """Findings per file (path relative to `root`) of every .cu/.cuh under the subdirectories."""
    return files_findings(root, [path.relative_to(root).as_posix() for name in subdirectories
                                 for path in sorted((root / name).rglob("*"))
                                 if path.suffix in SOURCE_SUFFIXES and path.is_file()])


def files_findings(root: Path, files: Iterable[str]) -> dict[str, list[Finding]]:
    """Findings per file of the named files (paths relative to `root`)."""
    found: dict[str, list[Finding]] = {}
    for file in files:
        text, _ = decode_source((root / file).read_bytes())
        found[file] = analyze_text(text)
    return found


def compare(labels: list[Label], findings: dict[str, list[Finding]]) -> Comparison:
    """Labels against findings; labels of files outside `findings` (not fetched) are skipped."""
    result = Comparison()
    at: dict[tuple[str, str], Reported] = {}
    for file, file_findings in findings.items():
        for finding in file_findings:
            if finding.severity not in REPORTED:
                continue
            reported = Reported(f"{file}:{finding.span.start.line + 1}", finding.rule, finding.severity,
                                finding.message)
            result.reported.append(reported)
            at.setdefault((reported.location, reported.rule), reported)
    labelled = {(label.location, label.rule): label for label in labels}
    for label in labels:
        if label.location.rsplit(":", 1)[0] not in findings:
            continue
        hit = at.get((label.location, label.rule))
        if label.verdict == "tp" and hit is None:
            result.lost_true_positives.append(label)
        elif label.verdict != "tp" and hit is not None:
            result.returned_false_positives.append((label, hit))
            if hit.severity == "error":
                result.false_errors.append((label, hit))
    result.unlabelled = [r for r in result.reported if (r.location, r.rule) not in labelled]
    return result
