"""Positions and ranges in source text, shared by every engine.

Lines and characters are 0-based; a character counts Unicode code points of the line (Python
`str` indices). The LSP converter translates to the negotiated position encoding (UTF-16 by
default), so engines never think about encodings.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Generic, TypeVar

T = TypeVar("T")


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
    if position.line > 0:
        # str.split runs in C: several times faster than a find() per line on the edit path
        # of a file of 20,000 lines.
        rest = text.split("\n", position.line)
        if len(rest) <= position.line:
            return len(text)
        line_start = len(text) - len(rest[-1])
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


def apply_edits(text: str, edits: Sequence[TextEdit]) -> str:
    """Apply non-overlapping edits (any order) to `text`."""
    located = sorted(
        ((offset_of(text, e.span.start), offset_of(text, e.span.end), e.new_text) for e in edits),
        reverse=True,
    )
    for start, end, new_text in located:
        text = text[:start] + new_text + text[end:]
    return text


def edit_of(text: str, start: int, end: int, new_text: str) -> TextEdit:
    """The edit replacing `text[start:end]` with `new_text`."""
    return TextEdit(span_of(text, start, end), new_text)


def edit_offsets(text: str, edits: Sequence[TextEdit]) -> list[tuple[int, int, str]]:
    """`edits` as (start, end, new text) `str` indices of `text`, in text order; ValueError when
    two overlap (an insertion at another edit's start or end does not overlap it, but two
    insertions at one point do: their order would be undefined)."""
    located = sorted((offset_of(text, e.span.start), offset_of(text, e.span.end), e.new_text) for e in edits)
    for (start, end, _), (next_start, next_end, _) in zip(located, located[1:], strict=False):
        if next_start < end or start == end == next_start == next_end:
            raise ValueError(f"overlapping edits at offsets {start}-{end} and {next_start}-{next_end}")
    return located


def compose_edits(text: str, first: Sequence[TextEdit], then: Sequence[TextEdit]) -> tuple[TextEdit, ...]:
    """Edits of `text` with the effect of applying `first` to it and then `then` to the result:
    an edit of `then` that touches one of `first` merges with it into one edit, the others are
    moved back over the text `first` inserted or removed before them."""
    middle = apply_edits(text, first)
    firsts = edit_offsets(text, first)
    pieces: list[tuple[int, int, int, int]] = []  # (start, end) in `middle`, (start, end) in `text`
    shift = 0
    for start, end, new_text in firsts:
        pieces.append((start + shift, start + shift + len(new_text), start, end))
        shift += len(new_text) - (end - start)
    touched = sorted([(a, b) for a, b, _, _ in pieces] + [(a, b) for a, b, _ in edit_offsets(middle, then)])
    clusters: list[list[int]] = []
    for start, end in touched:
        if clusters and start <= clusters[-1][1]:
            clusters[-1][1] = max(clusters[-1][1], end)
        else:
            clusters.append([start, end])
    seconds = edit_offsets(middle, then)
    composed = []
    for start, end in clusters:
        inside = [(a - start, b - start, t) for a, b, t in seconds if start <= a and b <= end]
        new_text = middle[start:end]
        for a, b, t in reversed(inside):
            new_text = new_text[:a] + t + new_text[b:]
        # Back to `text`: undo the shift of every `first` edit before each end of the cluster
        # (every one that touches the cluster lies inside it).
        before_start = sum(b - a - (d - c) for a, b, c, d in pieces if b <= start and not (a == b == start))
        before_end = sum(b - a - (d - c) for a, b, c, d in pieces if b <= end)
        composed.append(edit_of(text, start - before_start, end - before_end, new_text))
    return tuple(composed)


class SpanIndex(Generic[T]):
    """Items with spans, for "which items overlap this span / hold this position" in
    O(log n + answers) instead of a scan: what keeps hover and code actions as fast in a file
    of 5,000 kernels as in a file of one. Spans may overlap (an ERROR item around a kernel).
    Positions are compared as (line, character) int pairs: built once per analysis, on the
    edit path of big files."""

    def __init__(self, items: Sequence[T], span_of: Callable[[T], Span]) -> None:
        keyed = []
        for index, item in enumerate(items):
            span = span_of(item)
            keyed.append(((span.start.line, span.start.character), (span.end.line, span.end.character), index))
        if any(keyed[i][0] > keyed[i + 1][0] for i in range(len(keyed) - 1)):
            keyed.sort()
        self._items = [items[index] for _, _, index in keyed]
        self._starts = [start for start, _, _ in keyed]
        self._ends = [end for _, end, _ in keyed]
        # The largest end among the items up to each one: scanning back from a position can
        # stop as soon as no earlier item reaches it.
        self._reach = list(accumulate(self._ends, max))

    def overlapping(self, span: Span) -> list[T]:
        """The items whose span overlaps `span` (touching counts), in start order."""
        low = (span.start.line, span.start.character)
        found = []
        index = bisect_right(self._starts, (span.end.line, span.end.character)) - 1
        while index >= 0 and self._reach[index] >= low:
            if self._ends[index] >= low:
                found.append(self._items[index])
            index -= 1
        found.reverse()
        return found

    def containing(self, position: Position) -> list[T]:
        """The items whose span holds `position`, in start order."""
        return self.overlapping(Span(position, position))
