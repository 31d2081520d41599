"""Compiler confirmation of findings: what nvcc generated for a finding's line decides it.

`confirm_findings(findings, facts)` (pure) returns the findings with the compiler's verdict for
the rules whose claim the PTX of the line can check:
- R007/R008 (double precision): f64 instructions on the line confirm it ("confirmed by nvcc: 3
  f64 instructions in saxpy"; a hint becomes a warning, the loss is now proven); none, while
  the line has code, refutes it (nvcc narrowed it to float): downgraded to a hint.
- R001/R002 (uncoalesced global access): narrow (< 16-byte) global loads/stores on the line
  confirm the access (its space and width; the severity stays, the stride is the source's
  claim); only shared or local accesses, or only 16-byte vector accesses, refute it: hint.
A line without generated code (an uninstantiated template, code nvcc did not compile) gives no
verdict: the finding stays as the source analysis decided. Other rules are unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Literal

from regrapht.rules.types import Finding
from regrapht.validate.ptx import LineCode, PtxFacts

Verdict = Literal["confirmed", "refuted"]
CONFIRMABLE = frozenset({"R001", "R002", "R007", "R008"})
VECTOR_BYTES = 16


def _where(code: LineCode) -> str:
    names = sorted(n for n in code.functions if n)
    if not names:
        return ""
    shown = ", ".join(names[:2]) + (f" and {len(names) - 2} more" if len(names) > 2 else "")
    return f" in {shown}"


def _plural(count: int, noun: str, plural: str | None = None) -> str:
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def verdict_for(finding: Finding, code: LineCode) -> tuple[Verdict, str] | None:
    """The compiler's verdict on `finding` from the code of its line, with the evidence."""
    if code.instructions == 0:
        return None
    if finding.rule in ("R007", "R008"):
        if code.f64:
            return "confirmed", f"{_plural(code.f64, 'f64 instruction')}{_where(code)}"
        return "refuted", f"no f64 instruction for this line{_where(code)}"
    if finding.rule in ("R001", "R002"):
        narrow = [w for w in code.global_widths if w < VECTOR_BYTES]
        if narrow:
            kind = f"{narrow[0]}-byte global access"
            return "confirmed", f"{_plural(len(narrow), kind, kind + 'es')}{_where(code)}"
        if code.global_widths:
            return "refuted", f"only {VECTOR_BYTES}-byte vector global accesses on this line{_where(code)}"
        if code.shared_accesses or code.local_accesses:
            return "refuted", f"only shared or local memory accesses on this line{_where(code)}"
    return None


def confirm_findings(findings: Iterable[Finding], facts: PtxFacts) -> tuple[Finding, ...]:
    """`findings` with compiler verdicts applied to the confirmable rules (see the module doc)."""
    result = []
    for finding in findings:
        code = facts.at(finding.span.start.line + 1) if finding.rule in CONFIRMABLE else None
        verdict = verdict_for(finding, code) if code is not None else None
        if verdict is None:
            result.append(finding)
            continue
        kind, evidence = verdict
        if kind == "confirmed":
            # f64 code is the whole claim of R007/R008: proven now. For R001/R002 nvcc shows the
            # space and width, not the stride between threads: the severity stays.
            upgrade = finding.rule in ("R007", "R008") and finding.severity in ("hint", "information")
            severity = "warning" if upgrade else finding.severity
            said = "Confirmed by nvcc" if severity in ("warning", "error") else "nvcc shows"
            result.append(replace(finding, severity=severity, message=f"{finding.message} {said}: {evidence}."))
        else:
            result.append(replace(finding, severity="hint",
                                  message=f"{finding.message} Not confirmed by nvcc: {evidence}."))
    return tuple(result)
