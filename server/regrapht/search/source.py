"""Locating one kernel in a .cu file, splicing a new version of it back, and launch sites.

Search needs only a few structural facts about the file it rewrites: where the kernel's
definition starts and ends, its parameter list, its body, its `__launch_bounds__`, and where host
code launches it. They are found here by a small scanner that skips comments and string literals
and matches brackets, so that search works on any text the model returns (which the tree-sitter
model may not be able to parse cleanly) and never depends on the editor's parse state. It reads a
declaration the way `cuda/extract.py` does: every specifier before the name (`template <...>`,
`extern "C"`, `static`, `__launch_bounds__(...)` before or after `__global__`, attributes),
spelled across lines and with comments in between.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_GLOBAL = re.compile(r"\b__global__\b")
# Between `__global__` and the kernel's name: an identifier (a specifier, the return type, an
# attribute's name), a bracket that opens an attribute's arguments, or the end of a declaration.
_DECLARATOR_TOKEN = re.compile(r"[A-Za-z_]\w*|[(\[;{}]")
# Specifiers with an argument list of their own, whose parentheses are not the parameter list.
_ATTRIBUTES = frozenset({"__launch_bounds__", "__maxnreg__", "__cluster_dims__", "__attribute__", "__declspec",
                         "alignas", "__align__"})
_LAUNCH_BOUNDS = re.compile(r"\b__launch_bounds__\s*\(")


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
    # The arguments of its `__launch_bounds__` as written (comments dropped, spaces normalised),
    # e.g. ("256", "2"); () without one.
    launch_bounds: tuple[str, ...] = ()

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


@dataclass(frozen=True)
class KernelDeclaration:
    """One `__global__` declaration, with a body or without (offsets into the source)."""

    name: str
    start: int  # the line of its first specifier (a comment-only gap before it is not part of it)
    paren: int  # offset of the parameter list's "("
    close: int  # offset of its ")"
    launch_bounds: tuple[str, ...]  # as in `KernelText`
    template_parameters: tuple[str, ...]  # as written, e.g. ("typename T", "int B = 256")


def _declaration_start(masked: str, at: int) -> int:
    """Where the declaration holding offset `at` begins: after the end of what precedes it (`;`,
    `{`, `}`, a preprocessor line), at its first character of code."""
    begin = max(masked.rfind(c, 0, at) for c in ";{}") + 1
    offset, continued = begin, False
    for line in masked[begin:at].split("\n")[:-1]:
        offset += len(line) + 1
        if continued or line.lstrip().startswith("#"):
            begin = offset
            continued = line.rstrip().endswith("\\")
    while begin < at and masked[begin].isspace():
        begin += 1
    return begin


def _arguments(masked: str, paren: int, close: int) -> tuple[str, ...]:
    return tuple(" ".join(a.split()) for a in split_top_level(masked[paren + 1 : close]) if a.strip())


def _template_parameters(masked: str, begin: int, end: int) -> tuple[str, ...]:
    """The parameters of a `template <...>` that opens the declaration spanning [begin, end)."""
    opened = re.compile(r"\btemplate\s*<").search(masked, begin, end)
    if opened is None:
        return ()
    depth = 0
    for i in range(opened.end() - 1, end):
        depth += {"<": 1, ">": -1}.get(masked[i], 0)
        if depth == 0:
            return _arguments(masked, opened.end() - 1, i)
    return ()


def kernel_declarations(source: str) -> list[KernelDeclaration]:
    """Every `__global__` function declaration in `source`, with a body or without."""
    return _declarations(code_mask(source))


def _declarations(masked: str) -> list[KernelDeclaration]:
    found: list[KernelDeclaration] = []
    for qualifier in _GLOBAL.finditer(masked):
        begin = _declaration_start(masked, qualifier.start())
        bounds: tuple[str, ...] = ()
        before = _LAUNCH_BOUNDS.search(masked, begin, qualifier.start())
        if before is not None and (close := matching(masked, before.end() - 1)) > 0:
            bounds = _arguments(masked, before.end() - 1, close)
        pos = qualifier.end()
        while (token := _DECLARATOR_TOKEN.search(masked, pos)) is not None:
            word = token.group()
            if word in ";{}":
                break
            if word in "([":
                # `void (k)(...)` is not a kernel this reads; `[[...]]` is an attribute
                close = matching(masked, token.start()) if word == "[" else -1
                if close < 0:
                    break
                pos = close + 1
                continue
            after = token.end()
            while after < len(masked) and masked[after].isspace():
                after += 1
            if after >= len(masked) or masked[after] != "(":
                pos = token.end()
                continue
            close = matching(masked, after)
            if close < 0:
                break
            if word in _ATTRIBUTES:
                if word == "__launch_bounds__":
                    bounds = _arguments(masked, after, close)
                pos = close + 1
                continue
            line_start = masked.rfind("\n", 0, begin) + 1
            start = line_start if not masked[line_start:begin].strip() else begin
            found.append(KernelDeclaration(word, start, after, close, bounds,
                                           _template_parameters(masked, begin, qualifier.start())))
            break
    return found


def find_kernels(source: str) -> list[KernelText]:
    """Every `__global__` function definition (declarations without a body are skipped)."""
    masked = code_mask(source)
    kernels = []
    for declaration in _declarations(masked):
        close = declaration.close
        brace_rel = re.match(r"[^;{]*\{", masked[close + 1 :])
        if brace_rel is None:
            continue
        brace = close + 1 + brace_rel.end() - 1
        end_brace = matching(masked, brace)
        if end_brace < 0:
            continue
        kernels.append(
            KernelText(
                name=declaration.name, start=declaration.start, end=end_brace + 1,
                params_start=declaration.paren + 1, params_end=close, body_start=brace + 1,
                body_end=end_brace, params=_parse_params(source[declaration.paren + 1 : close]),
                launch_bounds=declaration.launch_bounds,
            )
        )
    return kernels


def kernel_launch_bounds(source: str, name: str) -> tuple[str, ...]:
    """The `__launch_bounds__` arguments of kernel `name` as any of its declarations (a forward
    declaration or the definition) writes them; () when none has them."""
    base = name.split("<")[0].strip()
    return next((d.launch_bounds for d in _declarations(code_mask(source)) if d.name == base and d.launch_bounds), ())


def integer_define(source: str, name: str) -> int | None:
    """The value of `#define NAME <integer literal>` when the file defines `name` exactly once so
    (and never `#undef`s it); None otherwise."""
    masked = code_mask(source)
    escaped = re.escape(name)
    values = re.findall(rf"^[ \t]*#[ \t]*define[ \t]+{escaped}[ \t]+\(?[ \t]*(\d+)[uU]?[ \t]*\)?[ \t]*$", masked, re.M)
    others = re.findall(rf"^[ \t]*#[ \t]*(?:define|undef)[ \t]+{escaped}\b", masked, re.M)
    return int(values[0]) if len(values) == 1 and len(others) == 1 else None


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
