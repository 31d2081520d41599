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
from collections.abc import Sequence
from pathlib import Path

from regrapht.cuda.model import Function, LaunchSite
from regrapht.cuda.ranges import split_template_args, template_integer
from regrapht.errors import InputError
from regrapht.spec.ctypes_ import CType, parse_ctype

MAX_HEADERS = 400  # headers read for typedefs, nearest first (breadth-first)
MAX_HEADER_BYTES = 2 << 20
_TYPEDEF = re.compile(r"\btypedef\s+([^;{}()]+?)\s*\b([A-Za-z_]\w*)\s*;")
_USING = re.compile(r"\busing\s+([A-Za-z_]\w*)\s*=\s*([^;{}()]+?)\s*;")
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
_OPAQUE_HANDLES = ("cudaTextureObject_t", "cudaSurfaceObject_t")


def typedefs(text: str, file: str | None, include_dirs: Sequence[str] = ()) -> dict[str, str]:
    """Typedef name -> the type it stands for, from `text` and the headers it includes (found
    beside `file` or in `include_dirs`, project headers only: those that exist there)."""
    aliases: dict[str, str] = {}
    seen: set[Path] = set()
    pending: list[tuple[str, Path | None]] = [(text, Path(file).resolve().parent if file else None)]
    while pending and len(seen) <= MAX_HEADERS:
        current, folder = pending.pop(0)
        for match in _TYPEDEF.finditer(current):
            aliases.setdefault(match.group(2), " ".join(match.group(1).split()))
        for match in _USING.finditer(current):
            aliases.setdefault(match.group(1), " ".join(match.group(2).split()))
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
    return aliases


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
              file: str | None, line: int) -> CType:
    """The spec type of parameter `name` (InputError naming it when a spec cannot describe it)."""
    text = declared_type(type_text)
    words = re.findall(r"[A-Za-z_]\w*", text)
    substituted = re.sub(r"[A-Za-z_]\w*", lambda m: types.get(m.group(0), m.group(0)), text)
    if any(w in _OPAQUE_HANDLES or w in ("texture", "surface") for w in words) or \
            any(aliases.get(w) in _OPAQUE_HANDLES for w in words):
        raise InputError(f"parameter {name!r} is a texture or surface object ({text!r}): a spec cannot make one "
                         "(it needs a CUDA array bound to it); benchmark the kernel through a wrapper that takes "
                         "a plain pointer instead", file=file, line=line)
    unresolved = [w for w in words if w in types.values() or w in types]
    try:
        return parse_ctype(substituted, aliases=aliases)
    except InputError as error:
        if "*" not in substituted and re.fullmatch(r"(const\s+)?(struct\s+)?[A-Za-z_][\w:]*", substituted):
            raise InputError(f"parameter {name!r} has type {text!r}, a struct passed by value, which a spec "
                             "cannot describe yet; write a spec for a wrapper kernel that takes its fields",
                             file=file, line=line) from None
        hint = " (template instance types)" if unresolved or not types and re.search(r"\b[A-Z]\w*\b", text) else ""
        raise InputError(f"parameter {name!r} has type {text!r}, which a spec cannot describe: {error.message}"
                         f"{hint}", file=file, line=line) from None


def _parameter_name(declaration: str) -> tuple[str, str | None]:
    """`typename T` -> ("T", None); `int B = 256` -> ("B", "256")."""
    head, _, default = declaration.partition("=")
    words = head.split()
    return (words[-1] if words else ""), (default.strip() or None)


def _host_type(host_text: str, variable: str) -> str | None:
    """The element type of host variable `variable` as declared (`float *d_in`, `float4* p`)."""
    match = re.search(rf"\b((?:const\s+)?[A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)?)\s*\*+\s*{re.escape(variable)}\b\s*[;=,)\[]",
                      host_text)
    if match is None:
        return None
    words = [w for w in match.group(1).split() if w not in ("const", "static", "auto")]
    return " ".join(words) if words else None


def launched_name(site: LaunchSite, text: str) -> str:
    """The kernel as the launch writes it, template arguments included (`k<float, 256>`)."""
    lines = text.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: site.span.start.line]) + site.span.start.character
    head = text[start: text.find("<<<", start)] if "<<<" in text[start:] else ""
    head = " ".join(head.split())
    return head if head.split("<", 1)[0].strip().split("::")[-1] == site.kernel.split("::")[-1] else site.kernel


def instance_name(function: Function, requested: str, site: LaunchSite | None, host_text: str,
                  instances: Sequence[str], *, file: str | None, launch_text: str = "") -> tuple[str, str]:
    """The kernel name to write (with template arguments for a template) and how it was chosen."""
    if not function.template_parameters or "<" in requested:
        return requested, ""
    written = launched_name(site, launch_text) if site is not None and launch_text else ""
    if "<" in written:
        return written.split("::")[-1], "the launch's template arguments"
    names = [_parameter_name(p) for p in function.template_parameters]
    values: dict[str, str] = {}
    if site is not None:
        for param, arg in zip(function.parameters, site.args, strict=False):
            base = param.base_type.strip()
            if any(base == n for n, _ in names) and re.fullmatch(r"[A-Za-z_]\w*", arg.text.strip()):
                host = _host_type(host_text, arg.text.strip()) if param.is_pointer else None
                if host is not None and "<" not in host:
                    values.setdefault(base, host)
    for name, default in names:
        if name not in values and default is not None:
            values[name] = default
    if all(n in values for n, _ in names):
        return f"{function.name}<{', '.join(values[n] for n, _ in names)}>", "the launch's argument types"
    mine = sorted({_instance(i) for i in instances if _instance(i).split("<", 1)[0].split("::")[-1] == function.name})
    if len(mine) == 1:
        return mine[0], "the only instance in the compiled original"
    listed = "; ".join(mine) if mine else "none found (compile the file with the project's flags to list them)"
    raise InputError(f"kernel {function.name!r} is a template and its arguments cannot be read from a launch; "
                     f"name the instance to describe, e.g. --kernel '{mine[0] if mine else function.name + '<...>'}'. "
                     f"Instances in the compiled original: {listed}", file=file,
                     line=function.name_span.start.line + 1)


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
