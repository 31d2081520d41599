"""The lexical kernel scanner: comment/literal masking, bracket matching, and the reading of
`__global__` declarations, definitions and launches from text alone.

`cuda/view.py` builds a file's kernels from the tree-sitter parse; this scanner is its fallback
for text tree-sitter cannot parse cleanly (model output, half-typed code), behind the same
interface. It skips comments and string literals and matches brackets, so it reads any text. It
reads a declaration the way the tree does: every specifier before the name (`template <...>`,
`extern "C"`, `static`, `__launch_bounds__(...)` before or after `__global__`, attributes),
spelled across lines and with comments in between. The mask and the text normalisers
(`split_top_level`, `parse_params`, `arguments`) are shared by both paths, so that the two spell
what they find the same way.
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
_TEMPLATE = re.compile(r"\btemplate\s*<")
_PARAM = re.compile(r"^(.*?)([A-Za-z_]\w*)\s*(\[\s*\])?$")


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


def parse_params(text: str) -> tuple[tuple[str, str], ...]:
    """(type, name) of each declaration of a parameter list's text: the type without the name,
    spaces normalised, `*` spaced ("const float *"), `x[]` read as a pointer."""
    params = []
    for part in split_top_level(" ".join(text.split())):
        if not part or part == "void":
            continue
        match = _PARAM.match(part)
        if match is None:
            continue
        ptype = match.group(1).strip()
        if match.group(3):
            ptype += " *"
        params.append((" ".join(ptype.replace("*", " * ").split()), match.group(2)))
    return tuple(params)


def arguments(masked: str, open_at: int, close: int) -> tuple[str, ...]:
    """The comma-separated arguments between two brackets, spaces normalised."""
    return tuple(" ".join(a.split()) for a in split_top_level(masked[open_at + 1 : close]) if a.strip())


def statement_start(masked: str, begin: int) -> int:
    """Where a declaration whose first code character is at `begin` starts: the start of its line
    when only blanks (or blanked comments) precede it there."""
    line_start = masked.rfind("\n", 0, begin) + 1
    return line_start if not masked[line_start:begin].strip() else begin


@dataclass(frozen=True)
class ScannedDeclaration:
    """One `__global__` declaration as the scanner reads it (offsets into the text)."""

    name: str
    start: int  # see `statement_start`
    paren: int  # the parameter list's "("
    close: int  # its ")"
    launch_bounds: tuple[str, ...]
    template_parameters: tuple[str, ...]


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


def _template_parameters(masked: str, begin: int, end: int) -> tuple[str, ...]:
    """The parameters of a `template <...>` that opens the declaration spanning [begin, end)."""
    opened = _TEMPLATE.search(masked, begin, end)
    if opened is None:
        return ()
    depth = 0
    for i in range(opened.end() - 1, end):
        depth += {"<": 1, ">": -1}.get(masked[i], 0)
        if depth == 0:
            return arguments(masked, opened.end() - 1, i)
    return ()


def scan_declarations(masked: str) -> list[ScannedDeclaration]:
    """Every `__global__` function declaration of a masked text, with a body or without."""
    found: list[ScannedDeclaration] = []
    for qualifier in _GLOBAL.finditer(masked):
        begin = _declaration_start(masked, qualifier.start())
        bounds: tuple[str, ...] = ()
        before = _LAUNCH_BOUNDS.search(masked, begin, qualifier.start())
        if before is not None and (close := matching(masked, before.end() - 1)) > 0:
            bounds = arguments(masked, before.end() - 1, close)
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
                    bounds = arguments(masked, after, close)
                pos = close + 1
                continue
            found.append(ScannedDeclaration(word, statement_start(masked, begin), after, close, bounds,
                                            _template_parameters(masked, begin, qualifier.start())))
            break
    return found


def scan_body(masked: str, close: int) -> tuple[int, int] | None:
    """(offset of "{", offset of the matching "}") of the body after a parameter list closing at
    `close`; None for a declaration without a body (or an unclosed one)."""
    brace_rel = re.match(r"[^;{]*\{", masked[close + 1 :])
    if brace_rel is None:
        return None
    brace = close + 1 + brace_rel.end() - 1
    end_brace = matching(masked, brace)
    return (brace, end_brace) if end_brace >= 0 else None


def scan_launches(masked: str, name: str) -> list[tuple[int, int]]:
    """(offset of "<<<", offset just past ">>>") of each launch of kernel `name` in a masked text
    (`name<<<`, `name<T><<<`, `ns::name<<<`; not `other_name<<<`)."""
    sites = []
    pattern = r"(?<!\w)" + re.escape(name) + r"(?:\s*<[^<>;]*>)?\s*(<<<)"
    for found in re.finditer(pattern, masked):
        start = found.start(1)
        close = masked.find(">>>", start)
        if close >= 0:
            sites.append((start, close + 3))
    return sites


def integer_define(masked: str, name: str) -> int | None:
    """The value of `#define NAME <integer literal>` when a masked text defines `name` exactly
    once so (and never `#undef`s it); None otherwise."""
    escaped = re.escape(name)
    values = re.findall(rf"^[ \t]*#[ \t]*define[ \t]+{escaped}[ \t]+\(?[ \t]*(\d+)[uU]?[ \t]*\)?[ \t]*$", masked, re.M)
    others = re.findall(rf"^[ \t]*#[ \t]*(?:define|undef)[ \t]+{escaped}\b", masked, re.M)
    return int(values[0]) if len(values) == 1 and len(others) == 1 else None
