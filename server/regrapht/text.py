"""Positions and ranges in source text, shared by every engine.

Lines and characters are 0-based; a character counts Unicode code points of the line (Python
`str` indices). The LSP converter translates to the negotiated position encoding (UTF-16 by
default), so engines never think about encodings.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Position:
    line: int
    character: int


@dataclass(frozen=True)
class Span:
    start: Position
    end: Position

    @classmethod
    def of(cls, start_line: int, start_char: int, end_line: int, end_char: int) -> Span:
        return cls(Position(start_line, start_char), Position(end_line, end_char))

    def contains(self, position: Position) -> bool:
        return self.start <= position <= self.end


@dataclass(frozen=True)
class TextEdit:
    """Replace `span` of the current text with `new_text`."""

    span: Span
    new_text: str


def offset_of(text: str, position: Position) -> int:
    """The `str` index of `position` in `text` (clamped to the text)."""
    line_start = 0
    for _ in range(position.line):
        next_newline = text.find("\n", line_start)
        if next_newline < 0:
            return len(text)
        line_start = next_newline + 1
    line_end = text.find("\n", line_start)
    if line_end < 0:
        line_end = len(text)
    return min(line_start + position.character, line_end)


def position_of(text: str, offset: int) -> Position:
    """The position of the `str` index `offset` in `text` (the inverse of `offset_of`)."""
    line_start = text.rfind("\n", 0, offset) + 1
    return Position(text.count("\n", 0, offset), offset - line_start)


def span_of(text: str, start: int, end: int) -> Span:
    """The span of `text[start:end]`."""
    return Span(position_of(text, start), position_of(text, end))


def apply_edits(text: str, edits: list[TextEdit] | tuple[TextEdit, ...]) -> str:
    """Apply non-overlapping edits (any order) to `text`."""
    located = sorted(
        ((offset_of(text, e.span.start), offset_of(text, e.span.end), e.new_text) for e in edits),
        reverse=True,
    )
    for start, end, new_text in located:
        text = text[:start] + new_text + text[end:]
    return text
