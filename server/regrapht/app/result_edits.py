"""The text edits that put an optimize run's best version into the current document.

Owns: the edits of the text the search started from that an applier's version carries
(`BestVersion.edits`), rebased onto the text the user has now; for a version the model wrote
(free text, no edits), replacing the kernel (with any helpers the answer put before it) found by
comparing the texts; rewriting the kernel's launch sites
when the launch configuration changed (spec-language expressions over the kernel's parameter
names become C over each site's argument texts, `ceil_div(a, b)` becoming `(a + b - 1) / b`);
and telling whether the kernel's text changed since the search started. Pure: text in, edits out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from regrapht.cuda.scan import matching, split_top_level
from regrapht.cuda.view import kernel_view, kernels_of
from regrapht.spec.launch import LaunchConfig
from regrapht.text import TextEdit, edit_offsets, span_of

if TYPE_CHECKING:  # annotations only: the server starts without the search engine
    from regrapht.search.pipeline import BestVersion

_NAME = re.compile(r"[A-Za-z_]\w*")
_SIMPLE = re.compile(r"[A-Za-z_]\w*|\d+[uUlL]*")
_HOST_FUNCTIONS = frozenset({"min", "max"})
_CALL_OPEN = re.compile(r"\s*\(")


@dataclass(frozen=True)
class KernelEdit:
    edits: tuple[TextEdit, ...]  # on the `text` it was built for
    problems: tuple[str, ...]  # non-empty: do not offer the edit


def build_edit(text: str, snapshot: str, kernel: str, best: BestVersion, before: LaunchConfig) -> KernelEdit:
    """The edit turning `text` (the document now) into the optimized version found for
    `snapshot` (the text searched): the kernel (with helpers the answer put before it) replaced,
    and the launch sites updated if the launch configuration changed."""
    old = kernel_view(snapshot, kernel)
    current = kernel_view(text, kernel)
    if old is None or current is None or current.text(text) != old.text(snapshot):
        return KernelEdit((), (f"{kernel} changed since the search started",))
    if best.edits is not None:
        rebased = _rebased(text, snapshot, (old.start, old.end), current.start, best.edits)
        if rebased is None:
            return KernelEdit((), ("the optimized version changes text outside the kernel that changed since",))
        launch_edits, problems = launch_site_edits(text, kernel, (current.start, current.end), before, best.launch)
        return KernelEdit(tuple(rebased + launch_edits), tuple(problems))
    prefix, suffix = snapshot[: old.start], snapshot[old.end :]
    source = best.source
    if not (source.startswith(prefix) and source.endswith(suffix) and len(source) >= len(prefix) + len(suffix)):
        return KernelEdit((), ("the optimized file differs outside the kernel",))
    region = source[len(prefix) : len(source) - len(suffix)]
    edits = [TextEdit(span_of(text, current.start, current.end), region)]
    launch_edits, problems = launch_site_edits(text, kernel, (current.start, current.end), before, best.launch)
    return KernelEdit(tuple(edits + launch_edits), tuple(problems))


def _rebased(text: str, snapshot: str, kernel: tuple[int, int], now: int,
             edits: Sequence[TextEdit]) -> list[TextEdit] | None:
    """`edits` of `snapshot` as edits of `text`, whose kernel (`snapshot[kernel[0]:kernel[1]]`)
    is the same and starts at `now`: an edit in the kernel (or an insertion just before it)
    moves with it, an insertion at the top of the file stays there, and any other edit only
    when the text is the snapshot; None when one cannot be placed."""
    if text == snapshot:
        return list(edits)
    start, end = kernel
    placed = []
    for begin, finish, new_text in edit_offsets(snapshot, edits):
        if start <= begin and finish <= end:
            placed.append(TextEdit(span_of(text, begin - start + now, finish - start + now), new_text))
        elif begin == finish == 0:
            placed.append(TextEdit(span_of(text, 0, 0), new_text))
        else:
            return None
    return placed


def kernel_changed(kernel_text: str, text: str, kernel: str) -> bool:
    """Has the definition of `kernel` in `text` changed from `kernel_text` (or disappeared)?"""
    found = kernel_view(text, kernel)
    return found is None or found.text(text) != kernel_text


def kernel_text(text: str, kernel: str) -> str:
    """The definition of `kernel` in `text`; empty if there is none."""
    found = kernel_view(text, kernel)
    return found.text(text) if found else ""


# ---------------------------------------------------------------------------------------------
# Launch sites


def launch_site_edits(
    text: str, kernel: str, skip: tuple[int, int], before: LaunchConfig, after: LaunchConfig
) -> tuple[list[TextEdit], list[str]]:
    """Edits of every launch site of `kernel` in `text` (outside `skip`, the kernel itself) for
    the new launch configuration `after`; problems for sites that cannot be rewritten."""
    if before == after:
        return [], []
    view = kernels_of(text)
    definition = view.kernel(kernel)
    params = [p.name for p in definition.params] if definition is not None else []
    masked = view.masked
    edits: list[TextEdit] = []
    problems: list[str] = []
    for site in view.launches_of(kernel):
        if skip[0] <= site.start < skip[1]:
            continue
        arguments = _site_arguments(text, masked, site.end, params)
        chevrons = _launch_arguments(list(site.args), arguments, before, after)
        if chevrons is None:
            line = text.count("\n", 0, site.start) + 1
            problems.append(f"line {line}: could not rewrite the launch configuration for the host's arguments")
            continue
        edits.append(TextEdit(span_of(text, site.start, site.end), f"<<<{', '.join(chevrons)}>>>"))
    return edits, problems


def _site_arguments(text: str, masked: str, chevrons_end: int, params: Sequence[str]) -> dict[str, str]:
    """The host's argument text for each kernel parameter name at one launch site."""
    opening = _CALL_OPEN.match(masked, chevrons_end)
    paren = opening.end() - 1 if opening else -1
    close = matching(masked, paren) if paren >= 0 else -1
    passed = split_top_level(text[paren + 1 : close]) if close > 0 else []
    return dict(zip(params, passed, strict=False))


def _launch_arguments(
    args: list[str], arguments: Mapping[str, str], before: LaunchConfig, after: LaunchConfig
) -> list[str] | None:
    """The site's `<<<...>>>` arguments for `after`; None if a changed part cannot be written
    with the site's arguments (or the site has fewer than grid and block)."""
    parts: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = [
        (0, before.grid, after.grid), (1, before.block, after.block),
        (2, (before.shared_bytes,), (after.shared_bytes,)),
    ]
    for index, old, new in parts:
        if old == new:
            continue
        translated = [host_expression(e, arguments) for e in new]
        if any(t is None for t in translated):
            return None
        value = _dims([t for t in translated if t is not None])
        if index < len(args):
            args[index] = value
        elif index == 2 and value.strip() != "0":
            args.append(value)
    return args if len(args) >= 2 else None


def host_expression(expr: str, arguments: Mapping[str, str]) -> str | None:
    """A launch expression over the kernel's parameter names, written with the host's argument
    texts of one launch site; None if it uses a name the site does not pass."""
    c_expr = ceil_div_to_c(expr)
    if c_expr is None:
        return None
    unknown: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        name = match.group(0)
        if name in arguments:
            return _group(arguments[name])
        if name not in _HOST_FUNCTIONS:
            unknown.append(name)
        return name

    result = _NAME.sub(substitute, c_expr)
    return None if unknown else result


def ceil_div_to_c(expr: str) -> str | None:
    """`ceil_div(a, b)` (spec language) as C: `(a + b - 1) / b`; None if malformed."""
    while (at := expr.find("ceil_div(")) >= 0:
        open_at = at + len("ceil_div")
        close = matching(expr, open_at)
        parts = split_top_level(expr[open_at + 1 : close]) if close > 0 else []
        if len(parts) != 2:
            return None
        a, b = (ceil_div_to_c(p) for p in parts)
        if a is None or b is None:
            return None
        expr = expr[:at] + f"({_group(a)} + {_group(b)} - 1) / {_group(b)}" + expr[close + 1 :]
    return expr


def _group(expr: str) -> str:
    return expr if _SIMPLE.fullmatch(expr.strip()) else f"({expr})"


def _dims(values: Sequence[str]) -> str:
    return values[0] if len(values) == 1 else f"dim3({', '.join(values)})"
