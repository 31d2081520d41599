"""Parameter types and template instances for spec inference (`infer.py`).

Owns reading a kernel parameter's declared type into a spec type: default arguments dropped
(`int *c = NULL`), template type parameters replaced by the instance's arguments (`T *` ->
`float*`), typedefs resolved through the file and the headers it includes (`typedef unsigned
int uint;`, `using Pixel = uchar4;`), CUDA vector types kept (`float4*`), texture and surface
objects and structs passed by value refused with a message that says so. And choosing the
template instance to describe: the instance named, the launch site's explicit arguments, the
arguments deducible from the launch's host variables, else the compiled original's instances
(listed for the user to choose when there are several; never silently dropped).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from regrapht.cuda.model import Function, LaunchSite
from regrapht.cuda.ranges import split_template_args, template_integer
from regrapht.errors import InputError
from regrapht.spec.ctypes_ import SCALARS, VECTORS, CType, dtype_bytes, parse_ctype, vector_layout
from regrapht.spec.host_templates import (
    HostInstance,
    argument_pointee,
    host_instances,
    parameter_names,
    split_top,
    substitute,
)
from regrapht.spec.layouts import Layout

MAX_HEADERS = 400  # headers read for typedefs, nearest first (breadth-first)
MAX_HEADER_BYTES = 2 << 20
_TYPEDEF = re.compile(r"\btypedef\s+([^;{}()]+?)\s*\b([A-Za-z_]\w*)\s*;")
_USING = re.compile(r"\busing\s+([A-Za-z_]\w*)\s*=\s*([^;{}()]+?)\s*;")
# `template <typename T> using to_t = void (*)(const void * x, T * y, int64_t k);`
_FUNCTION_USING = re.compile(r"(?:\btemplate\s*<([^<>;{}]*)>\s*)?\busing\s+([A-Za-z_]\w*)\s*=\s*[\w\s:*&]*"
                             r"\(\s*\*\s*\)\s*\(([^;{}]*)\)\s*;")
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
_ENUM = re.compile(r"\benum\s+(?:class\s+|struct\s+)?([A-Za-z_]\w*)\s*(?::\s*([A-Za-z_][\w\s]*?))?\s*\{")
_OPAQUE_HANDLES = ("cudaTextureObject_t", "cudaSurfaceObject_t")
ENUM_PREFIX = "enum "  # an alias to this: an enumeration, the rest its underlying type (`enum int`)
FUNCTION_PREFIX = "function pointer "  # an alias to this: a (template) alias of a function pointer type


def pointer_parameters(type_text: str, aliases: dict[str, str]) -> list[str] | None:
    """The parameter types of the function pointer type `type_text` names through `aliases`
    (`to_fp32_cuda_t` -> `to_t_cuda_t<float>` -> `const void * x, float * y, int64_t k`), or None."""
    text = " ".join(w for w in type_text.split() if w not in ("static", "inline", "const"))
    for _ in range(8):
        head = text.split("<", 1)[0].strip()
        target = aliases.get(head)
        if target is None:
            return None
        if target.startswith(FUNCTION_PREFIX):
            declared, _, params = target.removeprefix(FUNCTION_PREFIX).partition(">(")
            names = [d.split("=")[0].split()[-1] for d in split_top(declared.lstrip("<")) if d.split()]
            bound = dict(zip(names, split_template_args(text), strict=False))
            return [substitute(p, bound) for p in split_top(params.removesuffix(")"))]
        text = target
    return None


def typedefs(text: str, file: str | None, include_dirs: Sequence[str] = ()) -> dict[str, str]:
    """Typedef name -> the type it stands for, from `text` and the headers it includes (found
    beside `file` or in `include_dirs`, project headers only: those that exist there). An
    enumeration's name stands for `enum UNDERLYING` (`enum class Kind : uint8_t {` -> `enum
    uint8_t`; `int` without a fixed type)."""
    return typedefs_of(source_texts(text, file, include_dirs))


def source_texts(text: str, file: str | None, include_dirs: Sequence[str] = ()) -> list[str]:
    """`text` and the texts of the headers it includes (found beside `file` or in
    `include_dirs`, project headers only: those that exist there), nearest first, at most
    MAX_HEADERS of at most MAX_HEADER_BYTES each."""
    texts: list[str] = []
    seen: set[Path] = set()
    pending: list[tuple[str, Path | None]] = [(text, Path(file).resolve().parent if file else None)]
    while pending and len(seen) <= MAX_HEADERS:
        current, folder = pending.pop(0)
        texts.append(current)
        for name in _INCLUDE.findall(current):
            for root in ([folder] if folder else []) + [Path(d) for d in include_dirs]:
                candidate = (root / name).resolve()
                if candidate in seen or not candidate.is_file():
                    continue
                seen.add(candidate)
                try:
                    if candidate.stat().st_size <= MAX_HEADER_BYTES:
                        pending.append((candidate.read_text(encoding="utf-8", errors="replace"), candidate.parent))
                except OSError:
                    pass
                break
    return texts


_CONDITIONAL = re.compile(r"^\s*#\s*(ifdef|ifndef|if|elif|else|endif)\b\s*([A-Za-z_]\w*)?")


def active_text(text: str, defined: set[str]) -> str:
    """`text` without the lines of `#ifdef NAME` / `#ifndef NAME` arms that `defined` (the
    macros the compile defines) rules out; an `#if EXPRESSION` is not evaluated: both of its
    arms are kept (a typedef declared differently in them is then ambiguous, see typedefs_of)."""
    kept: list[str] = []
    stack: list[tuple[bool | None, bool]] = []  # (this arm is taken: None = unknown, the enclosing is live)
    live = True
    for line in text.splitlines():
        match = _CONDITIONAL.match(line)
        if match is None:
            if live:
                kept.append(line)
            continue
        kind, name = match.group(1), match.group(2)
        if kind in ("ifdef", "ifndef", "if"):
            taken: bool | None = None if kind == "if" or name is None else ((name in defined) == (kind == "ifdef"))
            stack.append((taken, live))
            live = live and taken is not False
        elif kind in ("elif", "else") and stack:
            taken, outer = stack[-1]
            flipped = None if taken is None or kind == "elif" else not taken
            stack[-1] = (flipped, outer)
            live = outer and flipped is not False
        elif kind == "endif" and stack:
            live = stack.pop()[1]
    return "\n".join(kept)


def typedefs_of(texts: Sequence[str], defines: Sequence[str] | None = None) -> dict[str, str]:
    """`typedefs` of texts already read. A name declared twice as different types (`typedef
    double label_t;` and `typedef float label_t;` in the two arms of an `#ifdef`, which are not
    evaluated here) is left out: which one the compiler sees is not known, and a spec must not
    guess it silently."""
    aliases: dict[str, str] = {}
    ambiguous: set[str] = set()

    def declare(name: str, target: str) -> None:
        if aliases.setdefault(name, target) != target:
            ambiguous.add(name)

    if defines is not None:  # the arms of #ifdef/#ifndef the compile's -D select (not the texts'
        # own #defines: every header's include guard `#ifndef X_H` / `#define X_H` would rule it out)
        texts = [active_text(t, {d.split("=", 1)[0] for d in defines}) for t in texts]
    for current in texts:
        for match in _TYPEDEF.finditer(current):
            declare(match.group(2), " ".join(match.group(1).split()))
        for match in _USING.finditer(current):
            declare(match.group(1), " ".join(match.group(2).split()))
        for match in _FUNCTION_USING.finditer(current):
            aliases.setdefault(match.group(2), f"{FUNCTION_PREFIX}<{match.group(1) or ''}>({' '.join(match.group(3).split())})")
        for match in _ENUM.finditer(current):
            aliases.setdefault(match.group(1), ENUM_PREFIX + " ".join((match.group(2) or "int").split()))
    return {name: target for name, target in aliases.items() if name not in ambiguous}


HEADER_SUFFIXES = (".cuh", ".h", ".hpp", ".hh", ".inl")


def including_source(header: Path, candidates: Sequence[Path]) -> Path | None:
    """The first of `candidates` (`.cu` files: a compile database's entries, open documents) that
    `#include`s `header` by its name (`"ops/scale.cuh"`, `<scale.cuh>`); None if none does."""
    for candidate in candidates:
        if candidate.suffix != ".cu" or not candidate.is_file():
            continue
        try:
            text = candidate.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if any(Path(name).name == header.name for name in _INCLUDE.findall(text)):
            return candidate
    return None


def declared_type(type_text: str) -> str:
    """The type of a parameter declaration without a default argument or `__restrict__`."""
    text = type_text.split("=", 1)[0]
    text = re.sub(r"\b(__restrict__|__restrict|restrict)\b", " ", text)
    return " ".join(text.split()).replace(" *", "*")


def spec_type(name: str, type_text: str, types: dict[str, str], aliases: dict[str, str], *,
              file: str | None, line: int, layouts: Callable[[str], Layout | str] | None = None) -> CType:
    """The spec type of parameter `name` (InputError naming it when a spec cannot describe it)."""
    found = spec_type_or_error(name, type_text, types, aliases, file=file, line=line, layouts=layouts)
    if isinstance(found, InputError):
        raise found
    return found


def spec_type_or_error(name: str, type_text: str, types: dict[str, str], aliases: dict[str, str], *,
                       file: str | None, line: int,
                       layouts: Callable[[str], Layout | str] | None = None) -> CType | InputError:
    """The spec type of parameter `name`, or the error that says why a spec cannot describe it.
    `layouts`: a project struct's layout (`layouts.py`), for one passed by value."""
    text = declared_type(type_text)
    words = re.findall(r"[A-Za-z_]\w*", text)
    substituted = re.sub(r"[A-Za-z_]\w*", lambda m: types.get(m.group(0), m.group(0)), text)
    if any(w in _OPAQUE_HANDLES or w in ("texture", "surface") for w in words) or \
            any(aliases.get(w) in _OPAQUE_HANDLES for w in words):
        return InputError(f"parameter {name!r} is a texture or surface object ({text!r}): a spec cannot make one "
                          "(it needs a CUDA array bound to it); benchmark the kernel through a wrapper that takes "
                          "a plain pointer instead", file=file, line=line)
    unresolved = [w for w in words if w in types.values() or w in types]
    by_value = by_value_type(substituted, aliases)
    if by_value is not None:
        return by_value
    parsed = ctype_or_message(substituted, aliases)
    if isinstance(parsed, CType):
        return parsed
    pointee = re.fullmatch(r"(const\s+)?(?:struct\s+)?([A-Za-z_][\w:]*)\s*(const\s*)?\*", substituted)
    if pointee is not None and pointee.group(2) not in SCALARS and pointee.group(2) not in VECTORS:
        layout = layouts(pointee.group(2)) if layouts is not None else "no layouts were given"
        if isinstance(layout, Layout):
            return CType(base=pointee.group(2), pointer=True, const=bool(pointee.group(1) or pointee.group(3)),
                         struct_size=layout.size)
        if not re.search(r"definition is not in the file", layout):
            return InputError(f"parameter {name!r} points to struct {pointee.group(2)!r}, which a spec cannot lay "
                              f"out as bytes ({layout}); write a spec for a wrapper kernel that takes plain buffers",
                              file=file, line=line)
    if "*" not in substituted and re.fullmatch(r"(const\s+)?(struct\s+)?[A-Za-z_][\w:]*", substituted):
        struct = substituted.split()[-1]
        layout = layouts(struct) if layouts is not None else "no layouts were given"
        if isinstance(layout, Layout):
            return CType(base=struct, struct_size=layout.size)
        return InputError(f"parameter {name!r} has type {text!r}, a struct passed by value, which a spec "
                          f"cannot lay out ({layout}); write a spec for a wrapper kernel that takes its fields",
                          file=file, line=line)
    hint = " (template instance types)" if unresolved or not types and re.search(r"\b[A-Z]\w*\b", text) else ""
    return InputError(f"parameter {name!r} has type {text!r}, which a spec cannot describe: {parsed}{hint}",
                      file=file, line=line)


def by_value_type(text: str, aliases: dict[str, str]) -> CType | None:
    """A CUDA vector (`const uint3`) or an enumeration (`enum ggml_op_pool`, `MissingType`)
    passed by value, as the bytes of a struct (`struct_size`, its alignment `by_value_align`);
    None for any other type."""
    if "*" in text or "&" in text:
        return None
    words = [w for w in re.findall(r"[A-Za-z_][\w:]*", text) if w not in ("const", "volatile", "struct", "enum")]
    if len(words) != 1:
        return None
    name = words[0]
    for _ in range(8):  # typedef chains to the vector or the enumeration
        if name in VECTORS or aliases.get(name, "").startswith(ENUM_PREFIX) or name not in aliases:
            break
        resolved = [w for w in aliases[name].split() if w not in ("const", "struct")]
        if len(resolved) != 1:
            return None
        name = resolved[0]
    if name in VECTORS:
        return CType(base=name, struct_size=vector_layout(name)[0])
    underlying = aliases.get(name, "")
    if underlying.startswith(ENUM_PREFIX) or re.search(r"\benum\b", text):
        scalar = ctype_or_message(underlying.removeprefix(ENUM_PREFIX) or "int", aliases)
        if isinstance(scalar, CType) and not scalar.pointer and scalar.info.integer:
            return CType(base=name, struct_size=dtype_bytes(scalar.info.dtype))
    return None


def by_value_align(ctype: CType) -> int:
    """The alignment of a by-value type `by_value_type` made: a vector's, an enumeration's size."""
    return vector_layout(ctype.base)[1] if ctype.base in VECTORS else ctype.struct_size


def ctype_or_message(text: str, aliases: dict[str, str]) -> CType | str:
    """`parse_ctype(text)`, or its error's message."""
    try:
        return parse_ctype(text, aliases=aliases)
    except InputError as error:
        return error.message


def _parameter_name(declaration: str) -> tuple[str, str | None]:
    """`typename T` -> ("T", None); `int B = 256` -> ("B", "256")."""
    head, _, default = declaration.partition("=")
    words = head.split()
    return (words[-1] if words else ""), (default.strip() or None)


def launched_name(site: LaunchSite, text: str) -> str:
    """The kernel as the launch writes it, template arguments included (`k<float, 256>`)."""
    lines = text.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: site.span.start.line]) + site.span.start.character
    head = text[start: text.find("<<<", start)] if "<<<" in text[start:] else ""
    head = " ".join(head.split())
    return head if head.split("<", 1)[0].strip().split("::")[-1] == site.kernel.split("::")[-1] else site.kernel


def instance_name(function: Function, requested: str, site: LaunchSite | None, host_text: str,
                  instances: Sequence[str], *, file: str | None, launch_text: str = "", host: Function | None = None,
                  host_functions: tuple[Function, ...] = (), aliases: dict[str, str] | None = None,
                  describable: Callable[[str], bool] | None = None) -> tuple[str, str]:
    """The kernel name to write (with template arguments for a template) and how it was chosen.

    From the launch: its explicit template arguments, then the ones its arguments' host types
    deduce, then the defaults. A launch inside a template host function (`concat_cont<T, 1>`,
    `k<<<...>>>(x)` with `const T * x`) is read once per instantiation of the host in the file
    (`host_templates.py`); the first instance whose parameter types a spec can describe
    (`describable`) is taken, the others are noted. Else the compiled original's instances: the
    only one is taken, several are listed in the error for the user to choose from."""
    host_names = {n for n, _ in parameter_names(host)} if host is not None and host.template_parameters else set()
    # a name as the launch writes it: with the host's parameters (`concat_cont<T, 2>`), or with the
    # leading arguments only (`soft_max_f32<true, 0, 0>`, the last deduced from an argument)
    named_with_host = "<" in requested and (bool(set(re.findall(r"[A-Za-z_]\w*", requested)) & host_names)
                                            or len(split_template_args(requested)) < len(function.template_parameters))
    if not function.template_parameters or ("<" in requested and not named_with_host):
        return requested, ""
    names = [_parameter_name(p) for p in function.template_parameters]
    written = requested if named_with_host else launched_name(site, launch_text) if site is not None and launch_text else ""
    bindings: list[HostInstance | None] = [None]
    if host is not None and host_names:
        returned = {f.name: pointer_parameters(f.return_type, aliases or {}) for f in host_functions}
        bindings = [*host_instances(host, launch_text, host_functions, returned=returned)] or [None]
    candidates: list[tuple[str, str]] = []
    for binding in bindings:
        values = binding.as_dict() if binding is not None else {}
        found = _from_launch(function, names, written, site, host_text, values)
        if found is None:
            continue
        name, how = found
        if set(re.findall(r"[A-Za-z_]\w*", name)) & host_names:
            continue  # a host template parameter no instantiation in the file binds
        if binding is not None and _from_launch(function, names, written, site, host_text, {}) != found:
            shown = ", ".join(f"{k} = {v}" for k, v in binding.bindings)
            how += f", with {host.name if host else 'the host'}'s {shown} from line {binding.line}"
        if all(name != c[0] for c in candidates):
            candidates.append((name, how))
    if candidates:
        chosen = next((c for c in candidates if describable is None or describable(c[0])), candidates[0])
        others = [c[0] for c in candidates if c is not chosen]
        note = f"; the file also launches {'; '.join(others[:6])}{' ...' if len(others) > 6 else ''}" if others else ""
        return chosen[0], chosen[1] + note
    mine = sorted({_instance(i) for i in instances if _instance(i).split("<", 1)[0].split("::")[-1] == function.name})
    if len(mine) == 1:
        return mine[0], "the only instance in the compiled original"
    listed = "; ".join(mine) if mine else "none found (compile the file with the project's flags to list them)"
    raise InputError(f"kernel {function.name!r} is a template and its arguments cannot be read from a launch; "
                     f"name the instance to describe, e.g. --kernel '{mine[0] if mine else function.name + '<...>'}'. "
                     f"Instances in the compiled original: {listed}", file=file,
                     line=function.name_span.start.line + 1)


def _from_launch(function: Function, names: list[tuple[str, str | None]], written: str, site: LaunchSite | None,
                 host_text: str, host_values: dict[str, str]) -> tuple[str, str] | None:
    """The instance a launch gives, with the host's template parameters replaced by
    `host_values`: its explicit arguments first, then those its arguments deduce, then the
    defaults; None when one stays unknown."""
    values: dict[str, str] = {}
    how = "the launch's argument types"
    if "<" in written:
        explicit = split_template_args(written)
        values = {n: substitute(" ".join(a.split()), host_values) for (n, _), a in zip(names, explicit, strict=False)}
        how = "the launch's template arguments"
    if site is not None:
        parameters = {n for n, _ in names}
        for param, arg in zip(function.parameters, site.args, strict=False):
            base = param.base_type.replace("const", " ").strip()
            if base not in parameters or base in values or not param.is_pointer:
                continue
            pointee = argument_pointee(arg.text, host_text)
            if pointee is not None and "<" not in pointee:
                values[base] = substitute(pointee, host_values)
    for name, default in names:
        if name not in values and default is not None:
            values[name] = substitute(default, values)
    if not all(n in values for n, _ in names):
        return None
    return f"{function.name}<{', '.join(values[n] for n, _ in names)}>", how


def _instance(signature: str) -> str:
    """`void reduce6<float, 256u, true>(float*, ...)` -> `reduce6<float, 256, true>`."""
    depth, cut = 0, len(signature)
    for index, char in enumerate(signature):
        depth += {"<": 1, ">": -1}.get(char, 0)
        if char == "(" and depth == 0:
            cut = index
            break
    head = signature[:cut].strip().removeprefix("void ").strip()
    if "<" not in head:
        return head
    args = [_plain_argument(a) for a in split_template_args(head)]
    return f"{head.split('<', 1)[0].strip()}<{', '.join(args)}>"


def _plain_argument(text: str) -> str:
    value = template_integer(text)
    compact = "".join(text.split())
    if value is not None and ("bool" in compact or compact in ("true", "false")):
        return "true" if value else "false"
    return str(value) if value is not None else " ".join(text.split())
