"""Messages checked against the facts they state, on every finding over the rule fixtures, the
examples, the expert kernels and (when fetched) ggml-cuda: the code a message quotes as its
subject is the code at the finding, a period or a conflict it names follows from the code
(`modulo 2` for `& 1`, a 2-way conflict for a stride of 2 words), the literals R007 names stand on
its line, the early return R012 cites comes before the barrier, and a related location is never
the finding's own. (Each rule's message variants are in test_causes.py.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from regrapht.cuda import parse_source
from regrapht.rules import Finding, analyze
from regrapht.text import Position, Span

ROOT = Path(__file__).resolve().parents[3]
CORPORA = [ROOT / "tests" / "data" / "rules", ROOT / "examples", ROOT / "tests" / "data" / "realworld" / "expert",
           ROOT / "tests" / "data" / "realworld" / "ggml-cuda"]
# Rules whose message opens with the code it is about, quoted.
SUBJECT_FIRST = frozenset({"R001", "R004", "R005", "R006", "R007", "R008", "R011", "R012", "R013"})


def _files() -> list[Path]:
    return sorted(p for corpus in CORPORA if corpus.is_dir() for p in corpus.rglob("*.cu*"))


def _text_of(lines: list[str], span: Span) -> str:
    if span.start.line == span.end.line:
        return lines[span.start.line][span.start.character:span.end.character]
    parts = [lines[span.start.line][span.start.character:]]
    parts += lines[span.start.line + 1:span.end.line]
    parts.append(lines[span.end.line][:span.end.character])
    return "\n".join(parts)


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _quoted(message: str) -> list[str]:
    return re.findall(r"`([^`]+)`", message)


def _problems(path: Path) -> Iterator[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines() or [""]
    for finding in analyze(parse_source(text)):
        where = f"{path.relative_to(ROOT)}:{finding.span.start.line + 1} {finding.rule}"
        yield from (f"{where}: {p}: {finding.message}" for p in _finding_problems(finding, lines))


def _finding_problems(finding: Finding, lines: list[str]) -> Iterator[str]:
    quoted = _quoted(finding.message)
    at = _text_of(lines, finding.span)
    if finding.rule in SUBJECT_FIRST and quoted and _squeezed(quoted[0]) not in _squeezed(at):
        yield f"quotes `{quoted[0]}`, which is not the code at the finding ({at!r})"
    if finding.rule == "R007":
        literals = _quoted(finding.message.split(";")[0].split(", so")[0])
        line = lines[finding.span.start.line]
        for literal in literals:
            if not re.search(rf"(?<![\w.]){re.escape(literal)}(?![\w.])", line):
                yield f"names `{literal}`, which is not on its line"
    if finding.rule == "R010":
        period = re.search(r"\(modulo (\d+)\)", finding.message)
        if period is not None:
            k = int(period.group(1))
            condition = _squeezed(at)
            if not (re.search(rf"%\(?{k}\b", condition) or re.search(rf"&\(?{k - 1}\b", condition)):
                yield f"says modulo {k} of `{at}`"
    if finding.rule == "R011":
        stride = re.search(r"strides by (\d+) words.*?a (\d+)-way", finding.message)
        if stride is not None and int(stride.group(2)) != min(32, int(stride.group(1)) & -int(stride.group(1))):
            yield "names a conflict its stride does not make"
    if finding.rule == "R012" and finding.severity == "hint" and \
            (not finding.related or finding.related[0].span.start.line > finding.span.start.line):
        yield "cites no early return before the barrier"
    for related in finding.related:
        if related.span == finding.span:
            yield "lists its own location as related"


FILES = _files()


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_messages_state_what_the_code_does(path: Path) -> None:
    problems = list(_problems(path))
    assert not problems, "\n".join(problems)


def _finding(rule: str, message: str, line: int = 0, start: int = 0, end: int = 10, severity: str = "warning") -> Finding:
    span = Span(Position(line, start), Position(line, end))
    return Finding(rule, severity, span, "k", message, "t", "d")  # type: ignore[arg-type]


def test_the_checks_catch_messages_that_contradict_the_code() -> None:
    lines = ["if (tid & 1) {", "    y[i] = y[i] * 0.5 + b[2 * t];", "    __syncthreads();"]
    assert list(_finding_problems(_finding("R010", "The branch on `tid & 1` alternates (modulo `1`)... (modulo 1).",
                                           0, 4, 11), lines))
    assert not list(_finding_problems(_finding("R010", "The branch on `tid & 1` alternates (modulo 2).", 0, 4, 11),
                                      lines))
    assert list(_finding_problems(_finding("R007", "`0.25` is a double-precision literal, so ...", 1, 20, 23), lines))
    assert list(_finding_problems(_finding("R001", "`A[2 * t]` strides by 2 elements.", 1, 24, 32), lines))
    assert not list(_finding_problems(_finding("R001", "`b[2 * t]` strides by 2 elements.", 1, 24, 32), lines))
    assert list(_finding_problems(_finding("R011", "`b[2 * t]` strides by 2 words between threads: a 4-way conflict.",
                                           1, 24, 32), lines))
    assert list(_finding_problems(_finding("R012", "`__syncthreads()` after the threads with `i > n` returned early.",
                                           2, 4, 19, "hint"), lines))
