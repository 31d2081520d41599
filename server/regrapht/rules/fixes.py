"""The fixes that rules offer and appliers make, one implementation each.

Owns the edit each mechanical fix makes on the source model's facts (`cuda/model.py`): a float
literal written as float (R007), a math function called in its float form (R008), `const` and
`__restrict__` on a pointer parameter (R006), a shared tile's rows padded by one element and the
R011 matcher that finds the tiles a warp walks down a column, and `#pragma unroll` before a
loop (R015). The rule checks (`rules/checks.py`) wrap them in `Fix`es of findings; the search's
appliers (`search/appliers/`) apply them to a whole kernel.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from regrapht.cuda.model import (
    FloatLiteral,
    Function,
    Loop,
    MathCall,
    MemoryAccess,
    Parameter,
    SharedArray,
    SourceModel,
)
from regrapht.text import Span, TextEdit, offset_of, position_of

WIDE_ELEMENT_TYPES = frozenset({"double", "long long", "int64_t", "uint64_t"})


def float_literal_edit(literal: FloatLiteral) -> TextEdit:
    """`2.0` -> `2.0f`."""
    return TextEdit(Span(literal.span.end, literal.span.end), "f")


def float_call_edit(call: MathCall, name: str | None = None) -> TextEdit:
    """`sqrt(` -> `sqrtf(` (or `name(`, e.g. an intrinsic `__expf`)."""
    return TextEdit(call.span, name or call.float_name)


def qualifier_edits(parameter: Parameter, const: bool, restrict: bool, text: str | None = None) -> tuple[TextEdit, ...]:
    """`const` before the declaration and `__restrict__` after its `*`, as asked (and missing).
    With the file's `text`, the spaces after the `*` give way (`float * x` -> `float *__restrict__ x`)
    and anything else there stays (`float *const x` -> `float *__restrict__ const x`); without
    it (a rule's fix on the model alone), the gap to the name becomes ` __restrict__ `."""
    edits: list[TextEdit] = []
    if const and not parameter.is_const:
        edits.append(TextEdit(Span(parameter.span.start, parameter.span.start), "const "))
    if restrict and not parameter.is_restrict and parameter.star_end is not None and parameter.name_span is not None:
        gap = Span(parameter.star_end, parameter.name_span.start)
        if text is None:
            edits.append(TextEdit(gap, "__restrict__ " if gap.start == gap.end else " __restrict__ "))
        else:
            start = offset_of(text, gap.start)
            spaces = len(text[start : offset_of(text, gap.end)]) - len(text[start : offset_of(text, gap.end)].lstrip())
            edits.append(TextEdit(Span(gap.start, position_of(text, start + spaces)), "__restrict__ "))
    return tuple(edits)


@dataclass(frozen=True)
class ColumnWalk:
    """A shared tile whose rows hold a multiple of 32 words, read down a column by a warp."""

    access: MemoryAccess
    shared: SharedArray
    row_words: int
    padded: str  # the padded row size, `33` or `TILE + 1`

    @property
    def edit(self) -> TextEdit:
        return TextEdit(self.shared.dim_spans[-1], self.padded)


def shared_declaration(model: SourceModel, function: Function, name: str) -> SharedArray | None:
    for shared in function.shared_arrays + model.file_shared_arrays:
        if shared.name == name:
            return shared
    return None


def element_words(shared: SharedArray) -> int:
    return 2 if shared.element_type in WIDE_ELEMENT_TYPES else 1


def column_walks(function: Function, model: SourceModel, row_words_multiple: int = 32) -> Iterator[ColumnWalk]:
    """The accesses of `function` in which neighbouring threads (threadIdx.x) read down a column
    of a shared tile whose rows are a multiple of `row_words_multiple` words: 32 puts all of
    them in one bank (R011), 16 half of them in each of two (the padding applier)."""
    for access in function.accesses:
        if access.space != "shared" or len(access.indices) < 2:
            continue
        shared = shared_declaration(model, function, access.array)
        if shared is None or len(shared.dims) != len(access.indices):
            continue
        row_words = shared.dim_values[-1]
        column_walk = any(c.kind in ("unit", "constant") for c in access.index_tid_x[:-1])
        if row_words is None or not column_walk or access.index_tid_x[-1].depends:
            continue
        if (row_words * element_words(shared)) % row_words_multiple:
            continue
        last = shared.dims[-1]
        yield ColumnWalk(access, shared, row_words, str(row_words + 1) if last.strip().isdigit() else f"{last} + 1")


def unroll_edit(loop: Loop, factor: int | None, indent: str | None = None) -> TextEdit:
    """`#pragma unroll` (fully, or by `factor`) on its own line before `loop`: inserted at the
    loop's start, with the loop re-indented by `indent` (what precedes the loop on its line;
    spaces to the loop's column when the text is not at hand, as in a rule's fix)."""
    at = loop.header_span.start
    pragma = "#pragma unroll" if factor is None else f"#pragma unroll {factor}"
    lead = " " * at.character if indent is None else indent
    return TextEdit(Span(at, at), f"{pragma}\n{lead}")
