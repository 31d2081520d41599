"""Compiler confirmation of findings: what nvcc generated for a finding's code decides it.

`confirm_findings(findings, facts)` (pure) returns the findings with the compiler's verdict for
the rules whose claim the PTX can check, each verdict stating its evidence:
- R007/R008 (double precision): f64 instructions on the line confirm it ("Confirmed by nvcc: 3
  f64 instructions in saxpy"); a hint becomes a warning and takes its `proven_message` (a hint
  that said nvcc could narrow the literal must not go on saying so); a hint without one (R007 on
  a line a kernel runs once per thread) claimed the f64 code already and stays a hint. None, while the line has
  code, refutes a warning (nvcc narrowed it to float): downgraded to a hint; for a hint, which
  said that nvcc narrows it, it is what the hint said ("nvcc shows: no f64 instruction ...").
- R001/R002 (uncoalesced global access): narrow (< 16-byte) global loads/stores on the line
  confirm the access (its space and width; the severity stays, the stride is the source's
  claim); only shared or local accesses, or only 16-byte vector accesses, refute it: hint.
- R015 (unrolling): a backward branch in the loop's lines (`Finding.scope`) shows nvcc kept the
  loop: the hint stays, with its `proven_message`. No backward branch while the loop has code: nvcc
  unrolled it fully, the hint has nothing left to say and is dropped.
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
CONFIRMABLE = frozenset({"R001", "R002", "R007", "R008", "R015"})
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


def loop_verdict(finding: Finding, facts: PtxFacts) -> tuple[Verdict, str] | None:
    """R015: did nvcc keep the loop of `finding.scope` (a backward branch in its lines)?"""
    scope = finding.scope or finding.span
    lines = [(n, c) for n, c in facts.between(scope.start.line + 1, scope.end.line + 1) if c.instructions]
    if not lines:
        return None
    branches = [n for n, c in lines if c.backward_branches]
    if not branches:
        return "refuted", "nvcc unrolled this loop fully (no backward branch in its code)"
    return "confirmed", f"a backward branch at line {branches[0]}{_where(dict(lines)[branches[0]])}"


def confirm_findings(findings: Iterable[Finding], facts: PtxFacts) -> tuple[Finding, ...]:
    """`findings` with compiler verdicts applied to the confirmable rules (see the module doc),
    without those the compiler refuted outright (an unrolling hint on a loop nvcc unrolled)."""
    return tuple(after for _, after in verdicts(findings, facts) if after is not None)


def verdicts(findings: Iterable[Finding], facts: PtxFacts) -> list[tuple[Finding, Finding | None]]:
    """Each finding with what the compiler makes of it: itself, a confirmed or demoted copy, or
    None where the compiler shows there is nothing to report."""
    result: list[tuple[Finding, Finding | None]] = []
    for finding in findings:
        verdict: tuple[Verdict, str] | None = None
        if finding.rule == "R015":
            verdict = loop_verdict(finding, facts)
        elif finding.rule in CONFIRMABLE:
            code = facts.at(finding.span.start.line + 1)
            verdict = verdict_for(finding, code) if code is not None else None
        if verdict is None:
            result.append((finding, finding))
            continue
        kind, evidence = verdict
        if kind == "confirmed":
            # f64 code is the whole claim of R007/R008: proven now. For R001/R002 nvcc shows the
            # space and width, not the stride between threads: the severity stays.
            # A hint that claims no more than the f64 code (R007 once per thread) stays one.
            upgrade = finding.rule in ("R007", "R008") and finding.severity in ("hint", "information") \
                and bool(finding.proven_message)
            severity = "warning" if upgrade else finding.severity
            said = "Confirmed by nvcc" if severity in ("warning", "error") else "nvcc shows"
            message = finding.proven_message or finding.message
            result.append((finding, replace(finding, severity=severity, message=f"{message} {said}: {evidence}.")))
        elif finding.rule == "R015":
            result.append((finding, None))  # nothing left to unroll: the hint is wrong, not weaker
        elif finding.rule == "R007" and finding.severity == "hint":
            # The hint said nvcc narrows the literal to float: no f64 code is what it said.
            result.append((finding, replace(finding, message=f"{finding.message} nvcc shows: {evidence} "
                                                             "(narrowed to float).")))
        else:
            result.append((finding, replace(finding, severity="hint",
                                            message=f"{finding.message} Not confirmed by nvcc: {evidence}.")))
    return result
