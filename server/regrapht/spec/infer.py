"""Best-effort spec inference from a launch site: what `regrapht spec infer` and the editor's
"Create benchmark spec" action write.

Owns turning the CUDA source model (`regrapht.cuda`: kernel parameters, launch sites with
grid/block/argument texts, `dim3` declarations, `cudaMalloc` sizes) into a spec: launch
expressions are rewritten from the host's names into the kernel's parameter names; pointer
counts come from `cudaMalloc(&p, n * sizeof(T))`; roles from what the kernel reads and writes;
anything that cannot be expressed over the kernel's scalars falls back to a plain default, and
the result always parses (it is checked with the spec parser before it is returned).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from regrapht.cuda.model import Function, LaunchSite, SourceModel
from regrapht.cuda.parse import parse_source
from regrapht.errors import InputError
from regrapht.spec.ctypes_ import SCALARS, parse_ctype
from regrapht.spec.expr import evaluate, names_in
from regrapht.spec.model import parse_spec

DEFAULT_SIZE = "1 << 20"


@dataclass
class _Arg:
    name: str
    type: str
    value: str | None = None
    count: str | None = None
    init: str | None = None
    role: str | None = None


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dims_text(values: list[str]) -> str:
    return "[" + ", ".join(v if re.fullmatch(r"\d+", v) else _toml_str(v) for v in values) + "]"


def render(name: str, grid: list[str], block: list[str], args: list[_Arg], shared: str = "0",
           comment: str = "") -> str:
    lines = [f"# {line}" for line in comment.splitlines()] if comment else []
    lines += ["[[kernel]]", f"name = {_toml_str(name)}", f"grid = {_dims_text(grid)}",
              f"block = {_dims_text(block)}"]
    if shared != "0":
        lines.append(f"shared_bytes = {_toml_str(shared)}")
    for arg in args:
        lines += ["", "[[kernel.arg]]", f"name = {_toml_str(arg.name)}", f"type = {_toml_str(arg.type)}"]
        for key in ("value", "count", "init", "role"):
            value = getattr(arg, key)
            if value is not None:
                lines.append(f"{key} = {_toml_str(value)}")
    return "\n".join(lines) + "\n"


def _rename(text: str, mapping: dict[str, str]) -> str:
    return re.sub(r"[A-Za-z_]\w*", lambda m: mapping.get(m.group(0), m.group(0)), text)


def _strip_sizeof(size: str) -> str:
    text = re.sub(r"\(\s*(?:size_t|int|unsigned|long)\s*\)", "", size)
    text = re.sub(r"\s*\*\s*sizeof\s*\([^)]*\)|sizeof\s*\([^)]*\)\s*\*\s*", "", text).strip()
    return "1" if re.fullmatch(r"sizeof\s*\([^)]*\)", text) else text


def _dims_of(expr_text: str, host: Function | None) -> list[str]:
    text = expr_text.strip()
    if host is not None:
        for dim3 in host.dim3s:
            if dim3.name == text:
                return [c.text for c in dim3.components] or ["1"]
    match = re.fullmatch(r"dim3\s*\((.*)\)", text, flags=re.S)
    if match:
        return [p.strip() for p in match.group(1).split(",") if p.strip()]
    return [text]


def _valid(expr: str, scalars: dict[str, int | float]) -> bool:
    if not names_in(expr) <= set(scalars):
        return False
    try:
        value = evaluate(expr, scalars)
    except InputError:
        return False
    return isinstance(value, int) and value > 0


def _pick_launch(model: SourceModel, kernel: str) -> tuple[LaunchSite | None, Function | None]:
    for function in model.functions:
        for site in function.launches:
            if site.kernel.split("<", 1)[0].strip() == kernel:
                return site, function
    return None, None


def infer_spec(text: str, kernel: str, *, file: str | None = None) -> str:
    """A spec (TOML text) for `kernel` of the CUDA source `text`, from its first launch site."""
    model = parse_source(text)
    base = kernel.split("<", 1)[0].strip()
    found = [k for k in model.kernels if k.name == base]
    if not found:
        known = ", ".join(k.name for k in model.kernels) or "none"
        raise InputError(f"no __global__ kernel {base!r} in the file (kernels: {known})", file=file)
    function = found[0]
    site, host = _pick_launch(model, base)
    name = kernel
    if "<" not in kernel and site is not None and "<" in site.kernel:
        name = site.kernel.strip()
    mapping: dict[str, str] = {}  # host name -> kernel parameter name
    literal: dict[str, str] = {}  # kernel parameter -> literal argument
    if site is not None:
        for param, launch_arg in zip(function.parameters, site.args, strict=False):
            arg_text = launch_arg.text.strip()
            if re.fullmatch(r"[A-Za-z_]\w*", arg_text):
                mapping[arg_text] = param.name
            elif re.fullmatch(r"-?[\d.]+[fFuUlL]*", arg_text):
                literal[param.name] = arg_text.rstrip("fFuUlL")
    host_of = {v: k for k, v in mapping.items()}
    two_d = site is not None and len(_dims_of(site.block.text, host)) > 1
    size_default = "1024" if two_d else DEFAULT_SIZE
    args: list[_Arg] = []
    scalars: dict[str, int | float] = {}
    notes: list[str] = []
    for param in function.parameters:
        type_text = " ".join(param.type_text.replace("__restrict__", "").split()).replace(" *", "*")
        try:
            ctype = parse_ctype(type_text)
        except InputError:
            raise InputError(f"parameter {param.name!r} has type {param.type_text!r}, which a spec cannot "
                             f"describe; write the spec by hand (template instance types)", file=file,
                             line=param.span.start.line + 1) from None
        if not ctype.pointer:
            default = "1.5" if not SCALARS[ctype.base].integer else size_default
            value = literal.get(param.name, default)
            if not _valid(value, scalars) and SCALARS[ctype.base].integer:
                value = size_default
            if SCALARS[ctype.base].integer and param.name not in literal:
                notes.append(f"{param.name} = {value} is a guess: set the problem size you want to time")
            scalars[param.name] = evaluate(value, scalars)
            args.append(_Arg(param.name, ctype.spelled(), value=value))
        else:
            args.append(_Arg(param.name, ctype.spelled()))
    size_names = [a.name for a in args if a.value is not None and SCALARS[parse_ctype(a.type).base].integer]
    for arg in args:
        if arg.value is not None:
            continue
        ctype = parse_ctype(arg.type)
        count = None
        if host is not None and arg.name in host_of:
            for malloc in host.mallocs:
                if malloc.pointer == host_of[arg.name]:
                    count = _rename(_strip_sizeof(malloc.size), mapping)
                    break
        if count is None or not names_in(count) <= set(scalars) or not _all_valid(count, scalars):
            if two_d and size_names:
                count = " * ".join(size_names[:2]) if len(size_names) > 1 else f"{size_names[0]} * {size_names[0]}"
            else:
                count = size_names[0] if size_names else size_default
            notes.append(f"count of {arg.name} = {count} is a guess")
        arg.count = count
        reads = any(a.array == arg.name and a.access in ("read", "readwrite") for a in function.accesses)
        atomic_only = any(a.array == arg.name for a in function.atomics) and not reads
        written = arg.name in function.written_pointers or atomic_only
        arg.role = "in" if ctype.const or not written else ("inout" if reads else "out")
        if atomic_only and not ctype.const:
            arg.init = "zeros"
        elif arg.role != "out":
            info = SCALARS[ctype.base]
            if ctype.base == "unsigned char":
                arg.init = "randint(0, 256)"
            elif info.integer and ctype.base != "bool":
                arg.init = "randint(0, 16)"
            else:
                arg.init = "uniform(-1, 1)"
    grid, block, shared = _launch(site, host, mapping, scalars, size_names)
    comment = f"Inferred by regrapht from {'the launch in ' + host.name if host else 'the kernel signature'}; " \
              "check the sizes and roles."
    if notes:
        comment += "\n" + "\n".join(notes)
    rendered = render(name, grid, block, args, shared, comment)
    parse_spec(rendered, file=file)  # the result must always be a valid spec
    return rendered


def _all_valid(expr: str, scalars: dict[str, int | float]) -> bool:
    return _valid(expr, scalars)


def _launch(site: LaunchSite | None, host: Function | None, mapping: dict[str, str],
            scalars: dict[str, int | float], size_names: list[str]) -> tuple[list[str], list[str], str]:
    block = ["256"]
    if site is not None:
        block = [_rename(d, mapping) for d in _dims_of(site.block.text, host)]
        if not all(_valid(b, scalars) for b in block):
            block = [str(v) if v else "256" for v in (site.block_dims or (256,))]
    size = size_names[0] if size_names else None
    fallback = [f"ceil_div({size}, {block[0]})" if size else "1"]
    grid = fallback
    if site is not None:
        grid = [_rename(d, mapping) for d in _dims_of(site.grid.text, host)]
        if not all(_valid(g, scalars) for g in grid):
            grid = fallback
    shared = "0"
    if site is not None and site.shared is not None:
        shared = _rename(site.shared.text, mapping)
        if not (_valid(shared, scalars) or shared.strip() == "0"):
            shared = "0"
    return grid, block, shared
