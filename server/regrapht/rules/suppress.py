"""Suppression comments: a finding the developer has looked at and decided to keep.

    x = y * 0.5;  // regrapht-disable-line R007
    // regrapht-disable-next-line R001, R006
    // regrapht-disable-file R015

`regrapht-disable-line` drops the named rules' findings that start on its line,
`regrapht-disable-next-line` those starting on the next line, `regrapht-disable-file` those in
the whole file. Rule codes are required (a bare comment disables nothing), so a suppression always
says what it hides. The editor's quick fixes "Disable R007 for this line / for this file" write
them (`suppression_comment`). Pure: lines in, findings out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from regrapht.rules.types import Finding

MARKER = "regrapht-disable"
_COMMENT = re.compile(r"//\s*regrapht-disable-(line|next-line|file)\b((?:[\s,]+R\d{3})+)")
_CODE = re.compile(r"R\d{3}")


@dataclass(frozen=True)
class Suppressions:
    by_line: dict[int, frozenset[str]]  # 0-based line -> rule codes disabled on it
    file: frozenset[str]

    def hides(self, finding: Finding) -> bool:
        return finding.rule in self.file or finding.rule in self.by_line.get(finding.span.start.line, frozenset())


def suppressions(lines: Sequence[str]) -> Suppressions:
    by_line: dict[int, set[str]] = {}
    file: set[str] = set()
    for number, line in enumerate(lines):
        if MARKER not in line:
            continue
        for match in _COMMENT.finditer(line):
            codes = set(_CODE.findall(match.group(2)))
            kind = match.group(1)
            if kind == "file":
                file |= codes
            else:
                by_line.setdefault(number + (kind == "next-line"), set()).update(codes)
    return Suppressions({k: frozenset(v) for k, v in by_line.items()}, frozenset(file))


def without_suppressed(lines: Sequence[str], findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """`findings` less those a suppression comment in `lines` names (cheap when there is none)."""
    if not findings or not any(MARKER in line for line in lines):
        return findings
    found = suppressions(lines)
    return tuple(f for f in findings if not found.hides(f))


def suppression_comment(rule: str, scope: str) -> str:
    """The comment "Disable <rule> for this line / file" writes (scope: "next-line" or "file")."""
    return f"// {MARKER}-{scope} {rule}"
