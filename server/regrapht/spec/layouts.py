"""The size and alignment of a project's plain struct, for a spec that passes it as bytes (by
value, `struct NAME` with `bytes`) or makes a buffer of them (`struct NAME*`, `element_bytes`).

Owns reading struct definitions (`struct block_q4_0 { half d; uint8_t qs[QK4_0 / 2]; };`) from
a file and its headers' texts and laying them out as the C ABI does (each field at the next
multiple of its alignment, the size rounded up to the largest alignment). Only plain data is laid
out: fields of the spec's scalar types, CUDA vectors, fixed arrays of those (sizes over integer
constants) and nested plain structs. Anything else (a base class, a bit field, `alignas`, a
union, a virtual method, a field whose type is unknown) gives a reason instead, and a field that
is a pointer gives one too: a spec's bytes cannot hold an address the kernel may follow. The
nvcc tests check these layouts against the compiler's `sizeof`/`alignof`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from regrapht.errors import InputError
from regrapht.spec.ctypes_ import SCALARS, VECTORS, CType, dtype_bytes, parse_ctype, vector_layout
from regrapht.spec.expr import evaluate, names_in

MAX_NESTING = 8
_STRUCT = re.compile(r"\b(struct|class|union)\s+((?:__align__|alignas)\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*"
                     r"(final\s*)?(:[^{;]*)?\{")
_TYPEDEF_STRUCT = re.compile(r"\btypedef\s+(struct|union)\s*(?:[A-Za-z_]\w*\s*)?\{")
_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)\s+([^\n]+)$", re.M)


@dataclass(frozen=True)
class Layout:
    size: int
    align: int



def _closing_brace(text: str, start: int) -> int | None:
    """The index of the `}` that closes the `{` at `start` (within 100,000 characters), or None."""
    depth = 0
    for index in range(start, min(len(text), start + 100_000)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return index
    return None

def struct_bodies(texts: list[str]) -> dict[str, str]:
    """Struct or class name -> its definition (`struct`/`union` keyword, what stands between the
    name and `{`, the body), the first of each name across `texts`."""
    bodies: dict[str, str] = {}
    for text in texts:
        for match in _STRUCT.finditer(text):
            name = match.group(3)
            if name in bodies:
                continue
            start = match.end() - 1
            end = _closing_brace(text, start)
            if end is not None:
                head = f"{match.group(1)} {match.group(2) or ''}{match.group(4) or ''}{match.group(5) or ''}"
                bodies[name] = head + "{" + text[start + 1: end] + "}"
        for match in _TYPEDEF_STRUCT.finditer(text):  # `typedef struct { ... } block_q4_0;`
            start = match.end() - 1
            end = _closing_brace(text, start)
            named = re.match(r"\s*([A-Za-z_]\w*)\s*;", text[end + 1:]) if end is not None else None
            if end is not None and named is not None and named.group(1) not in bodies:
                bodies[named.group(1)] = f"{match.group(1)} " + "{" + text[start + 1: end] + "}"
    return bodies


def integer_defines(texts: list[str]) -> dict[str, int]:
    """`#define QK4_0 32` (and defines over earlier ones: `#define QR4_0 (QK4_0 / 16)`) -> values."""
    values: dict[str, int] = {}
    for text in texts:
        for name, body in _DEFINE.findall(text):
            expression = body.split("//", 1)[0].strip()
            if name in values or not expression or not names_in(expression) <= set(values):
                continue
            if not re.fullmatch(r"[\w\s()+\-*/%<>]+", expression):
                continue
            value = _integer(expression, values)
            if value is not None:
                values[name] = value
    return values


def _integer(expression: str, constants: dict[str, int]) -> int | None:
    if not names_in(expression) <= set(constants):
        return None
    try:
        value = evaluate(expression, dict(constants))
    except InputError:  # a macro body that is not an expression of the spec's language
        return None
    return value if isinstance(value, int) else None


def _fields(body: str) -> list[str] | str:
    """The field declarations of a struct body, or the reason it is not plain data."""
    inner = body[body.index("{") + 1: -1]
    inner = re.sub(r"//[^\n]*|/\*.*?\*/", " ", inner, flags=re.S)
    # methods and constructors: drop their bodies, then their declarations; a nested struct or
    # union definition (`union { struct { half d; half m; }; half2 dm; };`) is not laid out here
    while True:
        nested = re.search(r"\{[^{}]*\}", inner)
        if nested is None:
            break
        before = inner[: nested.start()].rstrip()
        if not re.search(r"\)\s*(?:const|noexcept|override|final|\s)*$", before) and \
                not re.search(r"\)\s*:[^;{}]*$", before):  # a constructor's initialiser list
            return "it has a nested struct or union"
        inner = inner[: nested.start()] + ";" + inner[nested.end():]
    fields = []
    for statement in inner.split(";"):
        text = re.sub(r"\b(public|private|protected)\s*:", " ", statement).strip()
        if not text:
            continue
        if "virtual" in text.split():
            return "it has virtual methods"
        if "(" in text or text.startswith(("static ", "using ", "typedef ", "template", "friend ", "enum ")):
            continue  # a method, a static member, a nested type: no bytes of the instance
        if re.search(r"(?<!:):(?!:)", text):
            return f"field `{text}` is a bit field"
        fields.append(text.split("=", 1)[0].strip())
    return fields


def struct_layout(name: str, bodies: dict[str, str], aliases: dict[str, str], constants: dict[str, int],
                  depth: int = 0) -> Layout | str:
    """The C layout of plain struct `name`, or the reason a spec cannot lay it out."""
    body = bodies.get(name)
    if body is None:
        return f"its definition is not in the file or its headers ({name})"
    head = body[: body.index("{")]
    if head.startswith("union") or re.search(r"__align__|alignas|:", head) or depth > MAX_NESTING:
        return f"{name} is a union, has an explicit alignment or a base class"
    fields = _fields(body)
    if isinstance(fields, str):
        return f"{name}: {fields}"
    if not fields:
        return f"{name} has no fields a spec can lay out"
    offset, align = 0, 1
    for declaration in fields:
        member = _member(declaration, bodies, aliases, constants, depth)
        if isinstance(member, str):
            return f"{name}: {member}"
        size, member_align = member
        offset += -offset % member_align
        offset += size
        align = max(align, member_align)
    return Layout(offset + (-offset % align), align)


def _member(declaration: str, bodies: dict[str, str], aliases: dict[str, str], constants: dict[str, int],
            depth: int) -> tuple[int, int] | str:
    """(total size, alignment) of one field declaration (`uint8_t qs[QK4_0 / 2]`, `float a, b`)."""
    match = re.fullmatch(r"((?:const\s+|volatile\s+)*[A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)*?)\s*(\**)\s*"
                         r"([A-Za-z_]\w*(?:\s*\[[^\]]*\])*(?:\s*,\s*\**\s*[A-Za-z_]\w*(?:\s*\[[^\]]*\])*)*)",
                         " ".join(declaration.split()))
    if match is None:
        return f"field `{declaration}` is not a plain declaration"
    type_text, stars, names = match.group(1), match.group(2), match.group(3)
    if stars or "*" in names:
        return f"field `{declaration}` is a pointer, which a spec's bytes cannot give a valid address"
    element = _type_layout(type_text, bodies, aliases, constants, depth)
    if isinstance(element, str):
        return f"field `{declaration}`: {element}"
    size, align = element
    total, end = 0, 0
    for one in (n.strip() for n in names.split(",")):
        count = 1
        for dimension in re.findall(r"\[([^\]]*)\]", one):
            value = _integer(dimension, constants) if dimension.strip() else None
            if value is None or value <= 0:
                return f"field `{declaration}` has an array size that is not a known constant ({dimension.strip()!r})"
            count *= value
        end += -end % align
        end += size * count
        total = end
    return total, align


def _type_layout(type_text: str, bodies: dict[str, str], aliases: dict[str, str], constants: dict[str, int],
                 depth: int) -> tuple[int, int] | str:
    words = [w for w in type_text.split() if w not in ("const", "volatile", "struct", "class")]
    base = " ".join(words)
    for _ in range(8):
        if base in VECTORS or base in bodies or base not in aliases:
            break
        base = " ".join(w for w in aliases[base].split() if w not in ("const", "struct"))
    if base in VECTORS:
        return vector_layout(base)
    if base in bodies:
        nested = struct_layout(base, bodies, aliases, constants, depth + 1)
        return (nested.size, nested.align) if isinstance(nested, Layout) else nested
    if base in ("half", "__half", "nv_bfloat16", "__nv_bfloat16"):
        return 2, 2
    known = parse_known(base, aliases)
    if known is None or known.pointer:
        return f"unknown type {type_text!r}"
    width = dtype_bytes(known.info.dtype)
    return width, width


def parse_known(text: str, aliases: dict[str, str]) -> CType | None:
    """`parse_ctype(text)` for a scalar type the spec knows (not void), else None."""
    words = [w for w in text.split() if w]
    if not words or not all(re.fullmatch(r"[A-Za-z_][\w:]*", w) for w in words):
        return None
    base = " ".join(words)
    resolved = aliases.get(base, base)
    spelled = {"unsigned": "unsigned int", "signed": "int", "long int": "long", "long long int": "long long",
               "unsigned long int": "unsigned long", "short int": "short", "int8_t": "signed char",
               "uint8_t": "unsigned char", "int16_t": "short", "uint16_t": "unsigned short", "int32_t": "int",
               "uint32_t": "unsigned int", "int64_t": "long", "uint64_t": "unsigned long", "uint": "unsigned int",
               "ushort": "unsigned short", "ulong": "unsigned long"}
    for _ in range(8):
        if resolved in SCALARS or resolved in spelled:
            break
        if resolved not in aliases:
            return None
        resolved = " ".join(w for w in aliases[resolved].split() if w != "const")
    resolved = spelled.get(resolved, resolved)
    if resolved not in SCALARS or resolved in ("void", "half"):
        return None
    return parse_ctype(resolved)
