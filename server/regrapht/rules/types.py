"""What a performance rule reports: findings with a stable code, a technique and optional fixes."""

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
class Finding:
    rule: str  # stable code, "R001"
    severity: Severity
    span: Span
    kernel: str | None  # the enclosing __global__ function, if any
    message: str  # what is slow and why, one sentence
    technique: str  # reasoning-graph vertex, snake_case, e.g. "memory_coalescing"
    doc: str  # path of the rule's page relative to the repo docs, e.g. "rules/R001.md"
    fixes: tuple[Fix, ...] = field(default=())
