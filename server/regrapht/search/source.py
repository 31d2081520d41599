"""Locating one kernel in a .cu file, splicing a new version of it back, and launch sites.

Search needs only a few structural facts about the file it rewrites: where the kernel's
definition starts and ends, its parameter list, its body, and where host code launches it. They
are found here by a small scanner that skips comments and string literals and matches braces, so
that search works on any text the model returns (which the tree-sitter model may not be able to
parse cleanly) and never depends on the editor's parse state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_GLOBAL = re.compile(r"__global__")


@dataclass(frozen=True)
class Param:
    type: str  # e.g. "const float *" (normalised spaces, without the name)
    name: str

    @property
    def is_pointer(self) -> bool:
        return "*" in self.type

    @property
    def element_type(self) -> str:
        """The pointee type without qualifiers: "const float * __restrict__" -> "float"."""
        base = self.type.split("*")[0]
        words = [w for w in base.split() if w not in ("const", "volatile", "__restrict__")]
        return " ".join(words)


@dataclass(frozen=True)
class KernelText:
    name: str
    start: int  # offset of the definition (the line holding `__global__`, or its template)
    end: int  # offset just past the closing brace
    params_start: int  # offset just past "("
    params_end: int  # offset of ")"
    body_start: int  # offset just past "{"
    body_end: int  # offset of the closing "}"
    params: tuple[Param, ...]

    def text(self, source: str) -> str:
        return source[self.start : self.end]

    def body(self, source: str) -> str:
        return source[self.body_start : self.body_end]

    def header(self, source: str) -> str:
        return source[self.start : self.body_start]


def code_mask(source: str) -> str:
    """`source` with comments and string/char literal contents blanked (same length)."""
    out = list(source)
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if source.startswith("//", i):
            j = source.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif source.startswith("/*", i):
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and source[j] != c and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def matching(masked: str, open_at: int) -> int:
    """Offset of the bracket closing the one at `open_at`, or -1."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    opener = masked[open_at]
    closer = pairs[opener]
    depth = 0
    for i in range(open_at, len(masked)):
        ch = masked[i]
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return i
    return -1


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside (), [], {}, <> nesting; parts are stripped."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    tail = "".join(current).strip()
    if tail or parts:
        parts.append(tail)
    return parts


def _parse_params(text: str) -> tuple[Param, ...]:
    params = []
    for part in split_top_level(" ".join(text.split())):
        if not part or part == "void":
            continue
        match = re.match(r"^(.*?)([A-Za-z_]\w*)\s*(\[\s*\])?$", part)
        if match is None:
            continue
        ptype = match.group(1).strip()
        if match.group(3):
            ptype += " *"
        params.append(Param(" ".join(ptype.replace("*", " * ").split()), match.group(2)))
    return tuple(params)


def find_kernels(source: str) -> list[KernelText]:
    """Every `__global__` function definition (declarations without a body are skipped)."""
    masked = code_mask(source)
    kernels = []
    for found in _GLOBAL.finditer(masked):
        paren = masked.find("(", found.end())
        if paren < 0:
            continue
        name_match = re.search(r"([A-Za-z_]\w*)\s*$", masked[found.end() : paren])
        if name_match is None:
            continue
        close = matching(masked, paren)
        if close < 0:
            continue
        after = masked[close + 1 :]
        brace_rel = re.match(r"[^;{]*\{", after)
        if brace_rel is None:
            continue
        brace = close + 1 + brace_rel.end() - 1
        end_brace = matching(masked, brace)
        if end_brace < 0:
            continue
        line_start = masked.rfind("\n", 0, found.start()) + 1
        start = line_start
        # A template header on the previous line belongs to the definition.
        prev_end = line_start - 1
        if prev_end > 0:
            prev_start = masked.rfind("\n", 0, prev_end) + 1
            if masked[prev_start:prev_end].strip().startswith("template"):
                start = prev_start
        kernels.append(
            KernelText(
                name=name_match.group(1), start=start, end=end_brace + 1,
                params_start=paren + 1, params_end=close, body_start=brace + 1,
                body_end=end_brace, params=_parse_params(source[paren + 1 : close]),
            )
        )
    return kernels


def find_kernel(source: str, name: str) -> KernelText | None:
    base = name.split("<")[0].strip()
    for kernel in find_kernels(source):
        if kernel.name == base:
            return kernel
    return None


def replace_kernel(source: str, name: str, new_definition: str) -> str | None:
    """`source` with kernel `name`'s definition replaced by `new_definition` (None if absent)."""
    kernel = find_kernel(source, name)
    if kernel is None:
        return None
    return source[: kernel.start] + new_definition.strip("\n") + source[kernel.end :]


def signature_key(kernel: KernelText) -> tuple[str, tuple[str, ...]]:
    """What a candidate may not change: the name and the parameter types as the ABI sees them.

    Top-level qualifiers (`__restrict__`, a `const` on the pointer itself) do not change a C++
    parameter's type, so they are dropped; pointee qualifiers do and are kept.
    """
    types = []
    for param in kernel.params:
        t = param.type.replace("__restrict__", " ")
        if "*" in t:
            head, _, tail = t.rpartition("*")
            t = head + "*" + tail.replace("const", " ")
        types.append(" ".join(t.split()))
    return kernel.name, tuple(types)


@dataclass(frozen=True)
class LaunchSite:
    start: int  # offset of "<<<"
    end: int  # offset just past ">>>"
    args: tuple[str, ...]  # grid, block[, shared[, stream]] as written


def find_launch_sites(source: str, name: str) -> list[LaunchSite]:
    masked = code_mask(source)
    base = re.escape(name.split("<")[0].strip())
    sites = []
    for found in re.finditer(base + r"(?:\s*<[^<>;]*>)?\s*(<<<)", masked):
        start = found.start(1)
        close = masked.find(">>>", start)
        if close < 0:
            continue
        inner = source[start + 3 : close]
        sites.append(LaunchSite(start, close + 3, tuple(split_top_level(inner))))
    return sites
