"""`SourceDocument`: one open .cu file, its tree-sitter tree, updated incrementally on edits.

`apply_change(span, new_text)` takes LSP-style changes (a `Span` in code points, or None for
the whole text) and edits the old tree (`Tree.edit`); the reparse, which reuses the unchanged
regions, happens once on the next read of `.tree` or `.model`, so a burst of 200 keystrokes
costs one parse, not 200. `.model` is recomputed lazily too; functions whose text did not
change come from the builder's cache (also across a whole-text change).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from regrapht.cuda.model import Function, LaunchSite, SourceModel
from regrapht.cuda.parse import ModelBuilder, encode_source, make_parser
from regrapht.text import Position, Span, offset_of

if TYPE_CHECKING:
    from tree_sitter import Tree


class SourceDocument:
    def __init__(self, text: str) -> None:
        self._parser = make_parser()
        self._builder = ModelBuilder()
        self._text = text
        self._source = encode_source(text)
        self._tree = self._parser.parse(self._source)
        self._edited = False  # the tree has edits not yet reparsed
        self._model: SourceModel | None = None

    @property
    def text(self) -> str:
        return self._text

    @property
    def tree(self) -> object:
        """The current tree-sitter `Tree` (for callers that need raw syntax)."""
        return self._current_tree()

    @property
    def model(self) -> SourceModel:
        if self._model is None:
            self._model = self._builder.build(self._current_tree(), self._source)
        return self._model

    def _current_tree(self) -> Tree:
        if self._edited:
            self._source = encode_source(self._text)
            self._tree = self._parser.parse(self._source, self._tree)
            self._edited = False
        return self._tree

    def apply_change(self, span: Span | None, new_text: str) -> None:
        """Replace `span` (or everything, when None) with `new_text` and reparse incrementally."""
        if span is None:
            self._text = new_text
            self._source = encode_source(new_text)
            self._tree = self._parser.parse(self._source)
            self._edited = False
            self._model = None
            return
        old_text = self._text
        start = offset_of(old_text, span.start)
        end = max(start, offset_of(old_text, span.end))
        start_point = _point(old_text, start)
        old_end_point = _point(old_text, end)
        start_byte = _byte_offset(old_text, start)
        old_end_byte = start_byte + len(encode_source(old_text[start:end]))
        text = old_text[:start] + new_text + old_text[end:]
        new_end = start + len(new_text)
        new_end_point = _point(text, new_end)
        new_end_byte = start_byte + len(encode_source(new_text))
        self._tree.edit(start_byte, old_end_byte, new_end_byte, start_point, old_end_point, new_end_point)
        self._text = text
        self._edited = True
        self._model = None

    def kernel_at(self, position: Position) -> Function | None:
        return self.model.kernel_at(position)

    def launch_sites(self, kernel: str) -> tuple[LaunchSite, ...]:
        return self.model.launches_of(kernel)


def _byte_offset(text: str, offset: int) -> int:
    prefix = text[:offset]
    return len(prefix) if prefix.isascii() else len(encode_source(prefix))


def _point(text: str, offset: int) -> tuple[int, int]:
    """(row, byte column) of a `str` offset, as tree-sitter counts them."""
    row = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    return row, _byte_offset(text[line_start:offset], offset - line_start)
