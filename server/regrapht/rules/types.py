"""What a performance rule reports: findings with a stable code, a technique and optional fixes.

One finding per cause: where several locations share one cause (the literals of one line, the
accesses of one strided pass, the butterflies of one FFT stage), the finding stands at the first
of them and names the others in `related` (the editor's related information). A hint whose
message hedges a suspicion carries `proven_message`, the message it takes when the compiler
proves the suspicion (rules/confirm.py); `scope` is the code the claim is about when that is
more than `span` (the whole loop of an unrolling hint).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from regrapht.text import Span, TextEdit

Severity = Literal["error", "warning", "information", "hint"]


@dataclass(frozen=True)
class Fix:
    """A mechanical quick fix: applying `edits` to the document removes the finding."""

    title: str
    edits: tuple[TextEdit, ...]


@dataclass(frozen=True)
class Related:
    """Another location of a finding's cause, with what happens there."""

    span: Span
    message: str


@dataclass(frozen=True)
class Finding:
    rule: str  # stable code, "R001"
    severity: Severity
    span: Span
    kernel: str | None  # the enclosing __global__ function, if any
    message: str  # what is slow and why, one sentence
    technique: str  # reasoning-graph vertex, snake_case, e.g. "memory_coalescing"
    doc: str  # path of the rule's page relative to the repo docs, e.g. "rules/R001.md"
    fixes: tuple[Fix, ...] = field(default=())
    related: tuple[Related, ...] = field(default=())  # the cause's other locations
    proven_message: str = ""  # the message once the compiler proves a hedged claim ("" = keep `message`)
    scope: Span | None = None  # the code the claim is about, where it is more than `span`
