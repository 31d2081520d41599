"""Padding 2-D shared tiles by one column to remove bank conflicts: [32][32] -> [32][33].

Only tiles a warp reads down a column (the rules' matcher, `rules/fixes.py` `column_walks`, that
R011 reports), with rows of a multiple of 16 words (16 or more threads of a warp in one bank;
R011 itself warns from 32); the padding is R011's fix. Safe when the tile is only ever indexed
as `tile[a][b]` (never flattened through a pointer or measured with sizeof), since then the
extra column is simply never read.
"""

from __future__ import annotations

from regrapht.cuda.tokens import closing, tokens
from regrapht.rules.fixes import column_walks
from regrapht.search.appliers.common import ApplierInput, Rewrite, kernel_model
from regrapht.search.source import code_mask
from regrapht.text import offset_of

CONFLICTING_ROW_WORDS = 16  # rows of a multiple of this many words put 16+ threads in one bank


class SharedMemoryPadding:
    technique = "bank_conflict_padding"
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = kernel_model(given)
        if found is None:
            return []
        function = found.function
        masked = code_mask(given.source)
        tiles = {}
        for walk in column_walks(function, found.model, CONFLICTING_ROW_WORDS):
            shared = walk.shared
            if shared.function != function.name or shared.is_extern or shared.name in tiles:
                continue
            if _only_indexed(masked, shared.name, offset_of(given.source, shared.span.end), len(shared.dims)):
                tiles[shared.name] = walk
        if not tiles:
            return []
        ordered = sorted(tiles.values(), key=lambda w: (w.shared.span.start.line, w.shared.span.start.character))
        return [Rewrite(given.source, given.launch,
                        f"padded shared {', '.join(w.shared.name for w in reversed(ordered))} by one column",
                        edits=tuple(w.edit for w in ordered))]


def _only_indexed(masked: str, name: str, after: int, dims: int) -> bool:
    """Whether every use of `name` after its declaration is indexed in all `dims` dimensions
    (`tile[a][b]`), never bare (a pointer, `sizeof(tile)`)."""
    found = tokens(masked[after:])
    for index, token in enumerate(found):
        if token.text != name:
            continue
        at = index + 1
        for _ in range(dims):
            if at >= len(found) or found[at].text != "[":
                return False
            at = closing(found, at) + 1
            if at == 0:
                return False
    return True
