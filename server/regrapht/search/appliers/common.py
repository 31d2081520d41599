"""What every deterministic applier takes and returns, and the kernel shapes several match.

An applier is a mechanical, known-safe rewrite for one technique of the reasoning graph. It
returns the rewrites it can make (most promising first), or an empty list when the kernel does
not meet its preconditions. It never returns a rewrite it knows to be wrong; the evaluator's
differential check is the safety net, not the plan.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from regrapht.idioms.spelling import plain_spelling
from regrapht.search.source import KernelText, code_mask, find_kernel, kernel_launch_bounds, matching
from regrapht.spec.launch import LaunchConfig


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
    source: str
    launch: LaunchConfig
    note: str  # one line: what changed, shown in the technique path
    # Where the rewrite sits in its applier's parameter grid, e.g. (("threads_per_row", 128),
    # ("items", 4)): MCGS judges a proven technique's variants nearest the best one first
    # (`search/variants.py`). Categorical choices are small integer codes; () when not a grid point.
    params: tuple[tuple[str, int], ...] = ()


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
    shared by the callers asking every applier about one state (`plain_source(given)`)."""
    rewrites = applier.apply(given)
    if rewrites:
        return rewrites
    written = plain() if plain is not None else plain_spelling(given.source, given.kernel)
    if written == given.source:
        return []
    return [replace(r, note=f"{r.note} (read in plain form)") for r in applier.apply(replace(given, source=written))]


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


def int_literal(expr: str) -> int | None:
    text = expr.strip()
    if re.fullmatch(r"\d+[uU]?", text):
        return int(text.rstrip("uU"))
    return None


def ceil_parts(expr: str) -> tuple[str, int] | None:
    """("X", b) when `expr` is ceil(X / b) written as `(X + b-1) / b` or `ceil_div(X, b)`."""
    text = norm(expr)
    match = re.fullmatch(r"ceil_div\((.+),\s*(\d+)\)", text)
    if match:
        return match.group(1).strip(), int(match.group(2))
    match = re.fullmatch(r"\((.+)\+\s*(\d+)\s*\)\s*/\s*(\d+)", text)
    if match and int(match.group(2)) + 1 == int(match.group(3)):
        return match.group(1).strip(), int(match.group(3))
    match = re.fullmatch(r"\((.+)\+\s*(\d+)\s*-\s*1\s*\)\s*/\s*(\d+)", text)
    if match and int(match.group(2)) == int(match.group(3)):
        return match.group(1).strip(), int(match.group(3))
    return None


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


_TID_FORMS = (
    r"blockIdx\.x \* blockDim\.x \+ threadIdx\.x",
    r"blockDim\.x \* blockIdx\.x \+ threadIdx\.x",
    r"threadIdx\.x \+ blockIdx\.x \* blockDim\.x",
    r"threadIdx\.x \+ blockDim\.x \* blockIdx\.x",
)
TID_RE = "(?:" + "|".join(_TID_FORMS) + ")"
_INT_TYPES = r"(?:int|unsigned int|unsigned|long|long long|size_t|unsigned long long|const int)"


@dataclass(frozen=True)
class Elementwise:
    """`int i = <global x id>; if (i < n) { BODY }` (or `if (i >= n) return; BODY`)."""

    index_type: str
    index: str
    bound: str
    inner: str  # the guarded statements, comments blanked


def elementwise_form(body: str) -> Elementwise | None:
    text = norm(body)
    decl = re.match(rf"({_INT_TYPES}) ([A-Za-z_]\w*) = \(?{TID_RE}\)?; ", text)
    if decl is None:
        return None
    index = decl.group(2)
    rest = text[decl.end() :]
    guard = re.match(rf"if \( ?{index} < ([^(){{}};]+|[^{{}};]*\([^{{}};]*\)[^{{}};]*) ?\) ", rest)
    if guard:
        after = rest[guard.end() :]
        if after.startswith("{"):
            close = matching(after, 0)
            if close < 0 or after[close + 1 :].strip():
                return None
            inner = after[1:close]
        else:
            if after.count(";") != 1 or not after.rstrip().endswith(";"):
                return None
            inner = after
        return Elementwise(decl.group(1), index, guard.group(1).strip(), inner.strip())
    guard = re.match(rf"if \( ?{index} >= ([^{{}};]+?) ?\) return; ", rest)
    if guard:
        inner = rest[guard.end() :]
        if "return" in inner:
            return None
        return Elementwise(decl.group(1), index, guard.group(1).strip(), inner.strip())
    return None


def with_body(given: ApplierInput, kernel: KernelText, new_body: str) -> str:
    """The input's source with `kernel`'s body (between its braces) replaced by `new_body`."""
    return given.source[: kernel.body_start] + new_body + given.source[kernel.body_end :]


def with_header(given: ApplierInput, kernel: KernelText, new_header: str) -> str:
    return given.source[: kernel.start] + new_header + given.source[kernel.body_start :]


def pointer_params(kernel: KernelText) -> dict[str, str]:
    """Pointer parameter name -> element type."""
    return {p.name: p.element_type for p in kernel.params if p.is_pointer}


def writes_to(body: str, name: str) -> bool:
    """Whether the (comment-blanked) body may write through pointer `name`."""
    n = re.escape(name)
    patterns = (
        rf"\b{n}\s*\[[^;]*?\]\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)",
        rf"\*\s*\(?\s*{n}\b[^;=]*?(?:[-+*/%&|^]|<<|>>)?=(?!=)",
        rf"\batomic\w*\s*\(\s*&?\s*\(?\s*{n}\b",
        rf"\b{n}\s*\[[^;]*?\]\s*(?:\+\+|--)",
        rf"(?:\+\+|--)\s*{n}\s*\[",
    )
    if any(re.search(p, body) for p in patterns):
        return True
    # Passing the pointer itself somewhere (another function, an alias) may write through it.
    return bool(re.search(rf"[(,=]\s*&?\s*{n}\s*[,)+;]", body))


def grid_stride_header(index: str, index_type: str, bound: str) -> str:
    """`for (...) {` over a 64-bit counter (so `+= stride` cannot overflow near INT_MAX), with
    the original index re-declared in its original type so the statements see the same types."""
    return (
        f"for (long long {index}_gs = (long long)blockIdx.x * blockDim.x + threadIdx.x; {index}_gs < {bound};"
        f" {index}_gs += (long long)blockDim.x * gridDim.x) {{\n        {index_type.replace('const ', '')} {index} = "
        f"({index_type.replace('const ', '')}){index}_gs;"
    )
