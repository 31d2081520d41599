"""What every deterministic applier takes and returns, and the kernel shapes several match.

An applier is a mechanical, known-safe rewrite for one technique of the reasoning graph. It
returns the rewrites it can make (most promising first), or an empty list when the kernel does
not meet its preconditions. It never returns a rewrite it knows to be wrong; the evaluator's
differential check is the safety net, not the plan.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from regrapht.cuda.model import Function, SourceModel
from regrapht.cuda.parse import parse_source
from regrapht.cuda.tokens import closing, is_digits, tokens, top_level_commas
from regrapht.idioms.spelling import plain_spelling
from regrapht.search.source import KernelText, code_mask, find_kernel, kernel_launch_bounds
from regrapht.spec.launch import LaunchConfig
from regrapht.text import TextEdit, apply_edits, compose_edits, edit_of, edit_offsets, position_of


@dataclass(frozen=True)
class DeviceLimits:
    """What launch parameters are sized by, as the GPU worker reports them for its device."""

    sms: int
    max_threads_per_sm: int
    max_threads_per_block: int
    shared_bytes_per_block: int  # without the opt-in to more (a launch config cannot opt in)

    @staticmethod
    def of(device: Mapping[str, Any] | None) -> DeviceLimits | None:
        """From the worker's device description; None without a device or its SM count."""
        if not device or not isinstance(device.get("sms"), int) or device["sms"] <= 0:
            return None

        def number(key: str) -> int | None:
            value = device.get(key)
            return value if isinstance(value, int) and value > 0 else None

        # The architectural minimums of every GPU since compute capability 7.0 stand in for a
        # worker that does not report a limit (an older worker protocol).
        return DeviceLimits(device["sms"], number("max_threads_per_sm") or 1024,
                            number("max_threads_per_block") or 1024, number("max_shared_per_block") or 48 * 1024)

    def resident_blocks(self, threads: int) -> int:
        """Blocks of `threads` threads that fill every SM once (thread-limited)."""
        return self.sms * max(1, self.max_threads_per_sm // max(1, threads))


@dataclass(frozen=True)
class ApplierInput:
    source: str  # the whole file
    kernel: str  # the kernel's name
    launch: LaunchConfig  # how the kernel is launched now (spec expressions)
    # Element counts of pointer parameters and values of scalars that the spec fixes to
    # constants, e.g. {"bins": 256}; used only to size shared arrays.
    constants: Mapping[str, int] = field(default_factory=dict)
    # The device candidates are measured on: grids that must fill it are sized from it. None
    # (no device) gives grids sized by the problem alone.
    device: DeviceLimits | None = None


@dataclass(frozen=True)
class Rewrite:
    """One rewrite of an applier's input: `edits` of the text it was given (`base`: the kernel's
    body, parameters or specifiers, an added helper or include; never the whole file) and the
    launch it runs with. The new file text, `source`, is derived from them. A rewrite without
    edits changes the launch only; one made by other means than edits (a test's fake, a model's
    answer) may give its whole text as `base`."""

    base: str  # the text `edits` apply to: the source of the applier's input
    launch: LaunchConfig
    note: str  # one line: what changed, shown in the technique path
    # Where the rewrite sits in its applier's parameter grid, e.g. (("threads_per_row", 128),
    # ("items", 4)): MCGS judges a proven technique's variants nearest the best one first
    # (`search/variants.py`). Categorical choices are small integer codes; () when not a grid point.
    params: tuple[tuple[str, int], ...] = ()
    edits: tuple[TextEdit, ...] = ()

    @functools.cached_property
    def source(self) -> str:
        """The whole new file: `edits` applied to `base`."""
        return apply_edits(self.base, self.edits) if self.edits else self.base

    def then(self, edits: Sequence[TextEdit]) -> Rewrite:
        """This rewrite followed by `edits` of its new text, as edits of `base`."""
        return replace(self, edits=compose_edits(self.base, self.edits, edits)) if edits else self

    def rebased(self, onto: str) -> Rewrite:
        """This rewrite as edits of `onto`, a text that `base` was derived from by rewriting one
        region (a kernel written plainly, a loop taken out): the region's change composed with
        the edits."""
        if onto == self.base:
            return self
        return replace(self, base=onto, edits=compose_edits(onto, (changed_region(onto, self.base),), self.edits))


def changed_region(before: str, after: str) -> TextEdit:
    """The one edit of `before` that gives `after`: the text between their common prefix and
    suffix. Only for inputs derived by a transformation that returns whole text (`idioms`)."""
    size = min(len(before), len(after))
    start = 0
    while start < size and before[start] == after[start]:
        start += 1
    end = 0
    while end < size - start and before[-1 - end] == after[-1 - end]:
        end += 1
    return edit_of(before, start, len(before) - end, after[start : len(after) - end])


def edits(source: str, *changes: tuple[int, int, str]) -> tuple[TextEdit, ...]:
    """(start, end, new text) changes of `source` as edits, checked not to overlap; insertions
    at one point are joined in the order given."""
    joined: list[tuple[int, int, str]] = []
    for start, end, new_text in changes:
        if joined and start == end and joined[-1][0] == joined[-1][1] == start:
            joined[-1] = (start, end, joined[-1][2] + new_text)
        else:
            joined.append((start, end, new_text))
    made = tuple(edit_of(source, start, end, new_text) for start, end, new_text in joined)
    edit_offsets(source, made)  # raises on overlapping changes: an applier's bug
    return made


def body_change(kernel: KernelText, new_body: str) -> tuple[int, int, str]:
    """The change putting `new_body` between `kernel`'s braces."""
    return kernel.body_start, kernel.body_end, new_body


def body_edits(given: ApplierInput, kernel: KernelText, new_body: str) -> tuple[TextEdit, ...]:
    """The edit putting `new_body` between `kernel`'s braces in `given`'s source."""
    return edits(given.source, body_change(kernel, new_body))


class Applier(Protocol):
    technique: str  # the reasoning-graph vertex it implements (canonical name, graph/canon.py)
    also: tuple[str, ...]  # other vertices it also implements

    def apply(self, given: ApplierInput) -> list[Rewrite]: ...


def plain_source(given: ApplierInput) -> Callable[[], str]:
    """`given`'s kernel written plainly, computed on the first call only: one code state's
    appliers share it (`rewrites_of(..., plain=...)`; it parses the file up to ten times)."""
    return functools.cache(lambda: plain_spelling(given.source, given.kernel))


def rewrites_of(applier: Applier, given: ApplierInput, plain: Callable[[], str] | None = None) -> list[Rewrite]:
    """What every caller asks an applier for: its rewrites of `given`, or when it has none, its
    rewrites of the kernel written plainly (`idioms/spelling.py`: index macros expanded, one-line
    `__device__` helpers inlined, `T(0)`, do/while and count-down loops in plain form), so every
    recogniser, not only the scans', reads `in[IDX(r, c)]` as the subscript it is. Only the
    kernel's own text changes; the rest of the file is kept as written. `plain`: the plain form
    shared by the callers asking every applier about one state (`plain_source(given)`). Every
    rewrite comes back as edits of `given.source`, also one an applier made of an input it
    derived itself (`Rewrite.rebased`)."""
    rewrites = applier.apply(given)
    if rewrites:
        return [r.rebased(given.source) for r in rewrites]
    written = plain() if plain is not None else plain_spelling(given.source, given.kernel)
    if written == given.source:
        return []
    return [replace(r, note=f"{r.note} (read in plain form)").rebased(given.source)
            for r in applier.apply(replace(given, source=written))]


class KernelApplier:
    """The usual shape of an applier: `apply` locates the kernel (see `located`) and hands it,
    with its comment-blanked body, to `rewrite`; a kernel it cannot locate gets no rewrites."""

    technique: str
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = located(given)
        if found is None:
            return []
        kernel, body = found
        return self.rewrite(given, kernel, body)

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
        raise NotImplementedError


def norm(text: str) -> str:
    """Collapse whitespace (the caller has already blanked comments)."""
    return " ".join(text.split())


def located(given: ApplierInput) -> tuple[KernelText, str] | None:
    """The kernel and its body with comments blanked; None if absent or it holds strings."""
    kernel = find_kernel(given.source, given.kernel)
    if kernel is None:
        return None
    body = code_mask(given.source)[kernel.body_start : kernel.body_end]
    if '"' in body or "'" in body:
        return None  # printf and friends: leave such kernels to the model
    return kernel, body


@dataclass(frozen=True)
class KernelFacts:
    kernel: KernelText
    body: str  # comments blanked
    function: Function  # the kernel in `model`
    model: SourceModel  # of the comment-blanked file: its positions are the file's


@functools.lru_cache(maxsize=64)
def masked_model(source: str) -> SourceModel:
    """The source model of `source` with comments blanked (positions are the file's). Memoised by
    text: the appliers of one code state, and an applier's adapters over its own variants (the
    restrict step of jammed and column-stencil rewrites), ask about the same texts again."""
    return parse_source(code_mask(source))


@functools.lru_cache(maxsize=64)
def masked_headers(source: str) -> SourceModel:
    """`masked_model` with the functions' headers only (`parse_source(..., bodies=False)`: the
    same names, spans and parameters, no body facts). For an adapter that reads a kernel's
    parameters on every variant an applier makes (`qualifiers.with_restricted_pointers`): the
    whole model of each variant's text cost most of the applier's time."""
    return parse_source(code_mask(source), bodies=False)


def kernel_model(given: ApplierInput) -> KernelFacts | None:
    """The kernel, its body with comments blanked, and its facts in the source model (parsed
    from the comment-blanked file, so that a comment never reads as code); None as for
    `located`, or when the model has no such kernel there."""
    return _kernel_in(given, masked_model)


def kernel_header(given: ApplierInput) -> KernelFacts | None:
    """`kernel_model` from `masked_headers`: the same kernel, function header and parameters
    (None exactly when `kernel_model` is None), without the body's facts (`written_pointers`,
    accesses, loops... are empty)."""
    return _kernel_in(given, masked_headers)


def _kernel_in(given: ApplierInput, model_of: Callable[[str], SourceModel]) -> KernelFacts | None:
    found = located(given)
    if found is None:
        return None
    kernel, body = found
    model = model_of(given.source)
    at = position_of(given.source, kernel.body_start)
    for function in model.kernels:
        if function.span.start <= at <= function.span.end:  # the name may be an instance, `k<float>`
            return KernelFacts(kernel, body, function, model)
    return None


def int_literal(expr: str) -> int | None:
    """The value of a decimal integer literal (`256`, `256u`); None for anything else."""
    text = expr.strip()
    digits = text[:-1] if text[-1:] in ("u", "U") else text
    return int(digits) if is_digits(digits) else None


def ceil_parts(expr: str) -> tuple[str, int] | None:
    """("X", b) when `expr` is ceil(X / b) written as `(X + b-1) / b` or `ceil_div(X, b)`."""
    text = norm(expr)
    found = tokens(text)
    if len(found) < 4:
        return None
    words = [t.text for t in found]
    if words[0] == "ceil_div" and words[1] == "(" and closing(found, 1) == len(found) - 1:
        commas = top_level_commas(found, 2, len(found) - 1)
        if commas and commas[-1] == len(found) - 3 and found[-2].is_digits and commas[-1] > 2:
            return text[found[2].start : found[commas[-1]].start].strip(), int(words[-2])
        return None
    # `( X + c ) / b` with c == b - 1, or `( X + b - 1 ) / b`
    if words[0] != "(" or words[-2] != "/" or not found[-1].is_digits or words[-3] != ")" \
            or closing(found, 0) != len(found) - 3:
        return None
    b = int(words[-1])
    plus = None
    if len(found) >= 7 and words[-5] == "+" and found[-4].is_digits and int(words[-4]) + 1 == b:
        plus = len(found) - 5
    elif len(found) >= 9 and words[-7] == "+" and found[-6].is_digits and words[-5] == "-" and words[-4] == "1" \
            and int(words[-6]) == b:
        plus = len(found) - 7
    if plus is None or plus < 2:
        return None
    return text[found[1].start : found[plus].start].strip(), b


def ceil_expr(x: str, b: int) -> str:
    """`(X + b-1) / b`, the way the spec files and most launch sites write it."""
    if b == 1:
        return x
    return f"({x} + {b - 1}) / {b}"


def block_dims(launch: LaunchConfig) -> list[int] | None:
    """The block as integers padded to 3 dims, or None if any is not a literal."""
    dims = [int_literal(b) for b in launch.block]
    if any(d is None for d in dims):
        return None
    ints = [d for d in dims if d is not None]
    return ints + [1] * (3 - len(ints))


def has_launch_bounds(kernel: KernelText, source: str) -> bool:
    """Whether the kernel declares `__launch_bounds__` (its definition or a forward declaration)."""
    return bool(kernel.launch_bounds or kernel_launch_bounds(source, kernel.name))
