"""Best-effort spec inference from a launch site: what `regrapht spec infer` and the editor's
"Create benchmark spec" action write.

Owns turning the CUDA source model (`regrapht.cuda`: kernel parameters, launch sites with
grid/block/argument texts, `dim3` declarations, `cudaMalloc` sizes) into a spec: launch
expressions are rewritten from the host's names into the kernel's parameter names; pointer
counts come from `cudaMalloc(&p, n * sizeof(T))`; roles from what the kernel reads and writes;
anything that cannot be expressed over the kernel's scalars falls back to a plain default, and
the result always parses (it is checked with the spec parser before it is returned).

Never silently wrong: each buffer's count and role are then held against the kernel's access
ranges at the drafted launch (`spec/proofs.py` over `cuda/ranges.py`): a count the proofs show
large enough at the spec's size and the odd size every check runs stays; one they cannot confirm
is replaced by the proven bound when there is one; a role is the one the accesses prove (reads,
writes, both). Whatever is not proven is listed in the kernel's `guessed` key (a documented
extension of the format) and in the comment above it. Types and template instances:
`infer_types.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from regrapht.cuda.model import Function, LaunchSite, SourceModel
from regrapht.cuda.ranges import split_template_args, template_values
from regrapht.cuda.view import kernels_of
from regrapht.errors import InputError
from regrapht.spec.ctypes_ import SCALARS, VECTORS, CType
from regrapht.spec.expr import evaluate, names_in
from regrapht.spec.infer_types import (
    by_value_align,
    ctype_or_message,
    instance_name,
    source_texts,
    spec_type,
    spec_type_or_error,
    typedefs_of,
)
from regrapht.spec.layouts import Layout, integer_defines, struct_bodies, struct_layout
from regrapht.spec.model import KernelSpec, parse_spec
from regrapht.spec.resolve import MAX_BLOCK_DIM, MAX_THREADS_PER_BLOCK

DEFAULT_SIZE = "1 << 20"


@dataclass
class _Arg:
    name: str
    type: str
    value: str | None = None
    count: str | None = None
    init: str | None = None
    role: str | None = None
    ctype: CType | None = None
    raw: str | None = None  # a by-value struct, vector or enumeration: its bytes in hexadecimal
    align: int | None = None  # its alignment, when not the one its size implies
    element_bytes: int | None = None  # a buffer of structs: the size of one


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dims_text(values: list[str]) -> str:
    return "[" + ", ".join(v if re.fullmatch(r"\d+", v) else _toml_str(v) for v in values) + "]"


def render(name: str, grid: list[str], block: list[str], args: list[_Arg], shared: str = "0",
           comment: str = "", guessed: Sequence[str] = ()) -> str:
    lines = [f"# {line}" for line in comment.splitlines()] if comment else []
    lines += ["[[kernel]]", f"name = {_toml_str(name)}", f"grid = {_dims_text(grid)}",
              f"block = {_dims_text(block)}"]
    if shared != "0":
        lines.append(f"shared_bytes = {_toml_str(shared)}")
    if guessed:
        lines.append("guessed = [" + ", ".join(_toml_str(g) for g in dict.fromkeys(guessed)) + "]")
    for arg in args:
        lines += ["", "[[kernel.arg]]", f"name = {_toml_str(arg.name)}", f"type = {_toml_str(arg.type)}"]
        for key in ("value", "count", "init", "role"):
            value = getattr(arg, key)
            if value is not None:
                lines.append(f"{key} = {_toml_str(value)}")
        if arg.raw is not None:
            lines.append(f"bytes = {_toml_str(arg.raw)}")
        if arg.align is not None:
            lines.append(f"align = {arg.align}")
        if arg.element_bytes is not None:
            lines.append(f"element_bytes = {arg.element_bytes}")
    return "\n".join(lines) + "\n"


def _rename(text: str, mapping: dict[str, str]) -> str:
    return re.sub(r"[A-Za-z_]\w*", lambda m: mapping.get(m.group(0), m.group(0)), text)


MAX_EXPANSION_DEPTH = 6


def _expand(text: str, host: Function | None, mapping: dict[str, str], constants: dict[str, int],
            depth: int = 0) -> str:
    """`text` over the kernel's parameter names: host names passed to the kernel are renamed,
    other host locals are replaced by their definitions (`blocks_x` -> `(n + TILE - 1) / TILE`),
    `#define`/`constexpr` constants by their values."""
    local_values = dict(host.local_values) if host is not None else {}

    def substitute(match: re.Match[str]) -> str:
        name = match.group(0)
        if name in mapping:
            return mapping[name]
        if name in local_values and depth < MAX_EXPANSION_DEPTH and local_values[name] != name:
            inner = _expand(local_values[name], host, mapping, constants, depth + 1)
            return inner if re.fullmatch(r"[\w.]+", inner) else f"({inner})"
        if name in constants:
            return str(constants[name])
        return name

    text = re.sub(r"\(\s*(?:size_t|int|unsigned|long|int64_t|uint32_t)\s*\)", "", text)
    return _without_outer_parentheses(re.sub(r"[A-Za-z_]\w*", substitute, text).strip())


def _without_outer_parentheses(text: str) -> str:
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for index, char in enumerate(text):
            depth += char == "("
            depth -= char == ")"
            if depth == 0 and index < len(text) - 1:
                return text  # `(a) * (b)`: the first parenthesis closes early
        text = text[1:-1].strip()
    return text


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


def _instance_types(function: Function, name: str) -> dict[str, str]:
    """Template type parameter -> the type instance `name` gives it."""
    types, _ = template_values(split_template_args(name), tuple(p.partition("=")[0].split()[-1]
                                                                  for p in function.template_parameters if p.split()))
    return types


def _by_value(name: str, ctype: CType, align: int, notes: list[str], guessed: list[str]) -> _Arg:
    """A struct, CUDA vector or enumeration passed by value, as a struct's bytes: zeros, a guess
    (the value the host passes is computed at run time)."""
    size = ctype.struct_size
    natural = max(a for a in (1, 2, 4, 8, 16) if size % a == 0)
    kind = "the vector" if ctype.base in VECTORS else "the value"
    guessed.append(f"{name}.bytes")
    notes.append(f"{name} = {size} zero bytes is a guess: set the bytes of {kind} the kernel is launched with")
    return _Arg(name, f"struct {ctype.base}", ctype=ctype, raw="00" * size, align=None if align == natural else align)


def _local_constants(host: Function | None, defines: dict[str, int], text: str,
                     site: LaunchSite | None) -> dict[str, int | str]:
    """The launching function's locals that are integer or bool constants where the launch is
    (`constexpr int BLOCK_SIZE = 256;`, `const bool need_check = false;`: the last definition
    before the launch, over #defines and earlier such locals), for template arguments."""
    if host is None or site is None:
        return {}
    lines = text.splitlines(keepends=True)
    start = sum(len(row) for row in lines[: host.span.start.line])
    before = text[start: sum(len(row) for row in lines[: site.span.start.line]) + site.span.start.character]
    values: dict[str, int | str] = {}
    for local in dict.fromkeys(n for n, _ in host.local_values):
        found = re.findall(rf"\b{re.escape(local)}\s*=\s*([^;{{}}=]+);", before)
        if not found:
            continue
        initializer = found[-1].strip()
        known = defines | {k: v for k, v in values.items() if isinstance(v, int)}
        if initializer in ("true", "false"):
            values[local] = initializer
        elif names_in(initializer) <= set(known) and _valid(initializer, dict(known)):
            number = evaluate(initializer, dict(known))
            if isinstance(number, int):
                values[local] = number
    return values


def _normal_name(name: str, aliases: dict[str, str], defines: dict[str, int],
                 local: dict[str, int | str] | None = None) -> str:
    """`k<label_t, uint8_t, WARP_SIZE * 2>` -> `k<float, unsigned char, 64>`: typedefs among the
    template arguments spelled, and integer constants evaluated, as the compiled kernel's
    signature prints them."""
    if "<" not in name:
        return name
    numbers = defines | {k: v for k, v in (local or {}).items() if isinstance(v, int)}
    spelled = []
    for argument in split_template_args(name):
        parsed = ctype_or_message(argument, aliases) if re.fullmatch(r"[A-Za-z_][\w\s:]*", argument) else ""
        if isinstance(parsed, CType) and not parsed.pointer:
            spelled.append(parsed.spelled())
        elif local and argument.strip() in local:  # a constant of the launching function
            spelled.append(str(local[argument.strip()]))
        elif names_in(argument) and names_in(argument) <= set(numbers) and _valid(argument, dict(numbers)):
            spelled.append(str(evaluate(argument, dict(numbers))))
        else:
            spelled.append(argument)
    return f"{name.split('<', 1)[0].strip()}<{', '.join(spelled)}>"


def _describable(function: Function, name: str, aliases: dict[str, str],
                 layouts: Callable[[str], Layout | str]) -> bool:
    """Whether a spec can describe every parameter of instance `name`."""
    types = _instance_types(function, name)
    return all(isinstance(spec_type_or_error(p.name, p.type_text, types, aliases, file=None, line=0,
                                             layouts=layouts), CType) for p in function.parameters)


def _pick_launch(model: SourceModel, kernel: str) -> tuple[LaunchSite | None, Function | None]:
    for function in model.functions:
        for site in function.launches:
            if site.kernel.split("<", 1)[0].strip().split("::")[-1] == kernel:
                return site, function
    return None, None


def infer_spec(text: str, kernel: str, *, file: str | None = None, include_dirs: Sequence[str] = (),
               instances: Sequence[str] = (), context: str | None = None,
               compile_defines: Sequence[str] = ()) -> str:
    """A spec (TOML text) for `kernel` of the CUDA source `text`, from its first launch site.
    `include_dirs`: where the file's headers are (typedefs); `instances`: the compiled
    original's kernel signatures (a template's instances to choose from); `context`: the text of
    a `.cu` that includes this file (a header), whose launches are read."""
    model = kernels_of(text).model
    base = kernel.split("<", 1)[0].strip()
    found = [k for k in model.kernels if k.name == base]
    if not found:
        known = ", ".join(k.name for k in model.kernels) or "none"
        raise InputError(f"no __global__ kernel {base!r} in the file (kernels: {known})", file=file)
    function = found[0]
    launch_model = kernels_of(context).model if context is not None else model
    site, host = _pick_launch(launch_model, base)
    if site is None and context is not None:
        site, host = _pick_launch(model, base)
    host_text = _host_text(context or text, host)
    texts = source_texts(text if context is None else text + "\n" + context, file, include_dirs)
    aliases = typedefs_of(texts, compile_defines)  # the compile's -D: the #ifdef arms of typedefs it takes
    bodies, defines = struct_bodies(texts), integer_defines(texts) | dict(model.constants)

    def layouts(struct: str) -> Layout | str:
        return struct_layout(struct, bodies, aliases, defines)
    launch_text = context if context is not None and launch_model is not model else text
    name, chosen = instance_name(function, kernel, site, host_text, instances, file=file, launch_text=launch_text,
                                 host=host, aliases=aliases, host_functions=(launch_model if host is not None and launch_text is context
                                                            else model).functions,
                                 describable=lambda candidate: _describable(function, candidate, aliases, layouts))
    name = _normal_name(name, aliases, defines, _local_constants(host, defines, launch_text, site))
    types = _instance_types(function, name)
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
    constants = dict(launch_model.constants)
    constants.update({k: v for k, v in model.constants})
    two_d = site is not None and len(_dims_of(site.block.text, host)) > 1
    size_default = "1024" if two_d else DEFAULT_SIZE
    args: list[_Arg] = []
    scalars: dict[str, int | float] = {}
    notes: list[str] = [f"{name} is the instance described ({chosen})"] if chosen else []
    guessed: list[str] = []
    for param in function.parameters:
        ctype = spec_type(param.name, param.type_text, types, aliases, file=file, line=param.span.start.line + 1,
                          layouts=layouts)
        if ctype.is_struct:
            layout = layouts(ctype.base)
            align = layout.align if isinstance(layout, Layout) else by_value_align(ctype)
            args.append(_by_value(param.name, ctype, align, notes, guessed))
        elif not ctype.pointer:
            default = "1.5" if not SCALARS[ctype.base].integer else size_default
            value = literal.get(param.name, default)
            if not _valid(value, scalars) and SCALARS[ctype.base].integer:
                value = size_default
            if param.name not in literal and SCALARS[ctype.base].integer:  # a size to choose, not a claim
                notes.append(f"{param.name} = {value} is a guess: set the problem size you want to time")
            scalars[param.name] = evaluate(value, scalars)
            args.append(_Arg(param.name, ctype.spelled(), value=value, ctype=ctype))
        else:
            args.append(_Arg(param.name, ctype.spelled(), ctype=ctype))
    size_names = [a.name for a in args if a.value is not None and a.ctype is not None and a.ctype.info.integer
                  and a.ctype.base != "bool"]
    for arg in args:
        if arg.value is not None or arg.ctype is None or arg.ctype.is_struct:
            continue
        ctype = arg.ctype
        count = None
        if host is not None and arg.name in host_of:
            for malloc in host.mallocs:
                if malloc.pointer == host_of[arg.name]:
                    count = _expand(_strip_sizeof(malloc.size), host, mapping, constants)
                    break
        if count is None or not names_in(count) <= set(scalars) or not _all_valid(count, scalars):
            guessed.append(f"{arg.name}.count")
            from_indexing = _count_from_indexing(function, arg.name, size_names)
            if from_indexing is not None and _all_valid(from_indexing[0], scalars):
                count = from_indexing[0]
            elif two_d and size_names:
                count = " * ".join(size_names[:2]) if len(size_names) > 1 else f"{size_names[0]} * {size_names[0]}"
            else:
                count = size_names[0] if size_names else size_default
        arg.count = count
        reads = any(a.array == arg.name and a.access in ("read", "readwrite") for a in function.accesses)
        atomic_only = any(a.array == arg.name for a in function.atomics) and not reads
        written = arg.name in function.written_pointers or atomic_only
        arg.role = "in" if ctype.const or not written else ("inout" if reads else "out")
        _set_init(arg, atomic_only)
        if ctype.is_struct_pointer:
            arg.element_bytes = ctype.struct_size
            guessed.append(f"{arg.name}.init")
            notes.append(f"init of {arg.name} (structs {ctype.base} of {ctype.struct_size} bytes, as laid out from "
                         "their definition) is a guess: zeros; give the structs the kernel is launched with")
    grid, block, shared, launch_notes = _launch(site, host, mapping, constants, scalars, size_names)
    guessed += [note.split(" = ", 1)[0] for note in launch_notes]
    notes += launch_notes
    chosen_sizes = {a.name for a in args if a.value is not None and a.name not in literal and a.ctype is not None
                    and a.ctype.info.integer and a.ctype.base != "bool"}
    from dataclasses import replace

    from regrapht.spec.infer_proofs import prove_draft
    from regrapht.spec.proofs import spec_problems
    from regrapht.spec.resolve import resolve

    drafted = [replace(a) for a in args]
    drafted_guesses, drafted_notes, drafted_shared = list(guessed), list(notes), shared
    problems: list[InputError] = []
    for _ in range(6):  # proofs may raise counts (strides of chosen sizes): smaller sizes, again
        draft = _fitted(name, grid, block, args, drafted_shared, chosen_sizes, file, notes)
        proven = prove_draft(draft, text, args, guessed, notes)
        shared = proven if proven is not None else drafted_shared
        final = parse_spec(render(name, grid, block, args, shared, "", guessed), file=file).kernels[0]
        problems = spec_problems(final, text)
        if not problems and sum(b.nbytes for b in resolve(final).buffers) <= MAX_INFERRED_BYTES:
            break
        sizes = {a.name: a.value for a in args if a.name in chosen_sizes}
        args[:] = [replace(a, value=_quarter(sizes[a.name], a.value)) if a.name in sizes else replace(a)
                   for a in drafted]
        drafted = [replace(a) for a in args]
        guessed[:], notes[:] = list(drafted_guesses), list(drafted_notes)
    for arg in args:  # an output buffer of structs has no contents to guess
        if arg.ctype is not None and arg.ctype.is_struct_pointer and arg.init is None:
            guessed[:] = [g for g in guessed if g != f"{arg.name}.init"]
            notes[:] = [n for n in notes if not n.startswith(f"init of {arg.name} (")]
    if problems:
        raise InputError(f"no spec for {name} holds against its own accesses at the chosen sizes "
                         f"({problems[0].message}); write one by hand", file=file)
    where = f"the launch in {host.name}" if host else "the kernel signature"
    comment = f"Inferred by regrapht from {where}; every value not proven from the kernel's accesses is " \
              "listed in `guessed` (check those)."
    if notes:
        comment += "\n" + "\n".join(dict.fromkeys(notes))
    rendered = render(name, grid, block, args, shared, comment, guessed)
    parse_spec(rendered, file=file)  # the result must always be a valid spec
    return rendered


MAX_INFERRED_BYTES = 1 << 30  # chosen problem sizes shrink until the buffers fit in this


def _quarter(value: str | None, fallback: str | None) -> str | None:
    """A chosen size (an expression of literals) divided by 16, at least 1."""
    if value is None:
        return fallback
    number = evaluate(value, {})
    return str(max(1, int(number) // 16)) if isinstance(number, int) else value


def _fitted(name: str, grid: list[str], block: list[str], args: list[_Arg], shared: str, chosen: set[str],
            file: str | None, notes: list[str]) -> KernelSpec:
    """The draft spec, its chosen (not launched) problem sizes divided by 4 until the launch is
    valid and the buffers need at most MAX_INFERRED_BYTES (several sizes of 2^20 multiply)."""
    from regrapht.spec.resolve import resolve

    for _ in range(16):
        try:
            kernel = parse_spec(render(name, grid, block, args, shared), file=file).kernels[0]
            if sum(b.nbytes for b in resolve(kernel).buffers) <= MAX_INFERRED_BYTES:
                return kernel
        except InputError:
            if not chosen:
                raise
        values: dict[str, int | float] = {}
        shrunk = False
        for arg in args:
            if arg.value is None:
                continue
            value = evaluate(arg.value, values)
            if arg.name in chosen and isinstance(value, int) and value > 1:
                value = max(1, value // 4)
                arg.value = str(value)
                shrunk = True
            values[arg.name] = value
        if not shrunk:
            break
        notes.append("the chosen problem sizes were made smaller so that the launch is valid and the buffers fit "
                     f"in {MAX_INFERRED_BYTES >> 20} MiB")
    return parse_spec(render(name, grid, block, args, shared), file=file).kernels[0]


def _host_text(text: str, host: Function | None) -> str:
    if host is None:
        return text
    lines = text.splitlines()
    return "\n".join(lines[host.span.start.line: host.span.end.line + 1])


def _set_init(arg: _Arg, atomic_only: bool) -> None:
    ctype = arg.ctype
    assert ctype is not None
    arg.init = None
    if atomic_only and not ctype.const:
        arg.init = "zeros"
    elif arg.role != "out" and ctype.is_struct_pointer:
        arg.init = "zeros"  # random bytes would be garbage counts and indices; a guess either way
    elif arg.role != "out":
        info = SCALARS[ctype.base]
        if ctype.base in ("unsigned char", "void"):
            arg.init = "randint(0, 256)"
        elif info.integer and ctype.base != "bool":
            arg.init = "randint(0, 16)"
        else:
            arg.init = "uniform(-1, 1)"


def _all_valid(expr: str, scalars: dict[str, int | float]) -> bool:
    return _valid(expr, scalars)


def _top_level_terms(text: str) -> list[str]:
    """`row * N + (k + 1)` -> [`row * N`, `(k + 1)`]: the additive terms outside parentheses."""
    terms, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += char in "(["
        depth -= char in ")]"
        if depth == 0 and char in "+-" and index > start:
            terms.append(text[start:index])
            start = index + 1
    terms.append(text[start:])
    return [t.strip() for t in terms if t.strip()]


def _count_from_indexing(function: Function, pointer: str, size_names: list[str]) -> tuple[str, str] | None:
    """A buffer's element count from how the kernel indexes it: the leading term of each index
    with its variables replaced by their bounds (`row * K + k` with `row < M` -> `M * K`; an
    index `i` with `i < n` -> `n`). None when no size parameter shows up."""
    sizes = set(size_names)
    bounds: dict[str, str] = {}
    conditions = [b.condition.text for b in function.branches] + [loop.condition for loop in function.loops]
    for condition in conditions:
        for name, bound in re.findall(r"\b([A-Za-z_]\w*)\s*<=?\s*([A-Za-z_]\w*)\b", condition):
            if bound in sizes and name not in sizes:
                bounds.setdefault(name, bound)
    best: list[tuple[str, str]] = []  # (size, evidence) factors of the largest access
    for access in function.accesses:
        if access.array != pointer:
            continue
        factors: list[tuple[str, str]] = []
        for index in access.indices:
            leading: list[tuple[str, str]] = []
            for term in _top_level_terms(index.text):
                found = []
                for name in re.findall(r"[A-Za-z_]\w*", term):
                    if name in sizes:
                        found.append((name, name))
                    elif name in bounds:
                        found.append((bounds[name], f"{name} < {bounds[name]}"))
                if len(found) > len(leading):
                    leading = found
            factors += leading
        if len(factors) > len(best):
            best = factors
    if not best:
        return None
    best = best[:3]
    return " * ".join(size for size, _ in best), ", ".join(dict.fromkeys(why for _, why in best))


def _launch(site: LaunchSite | None, host: Function | None, mapping: dict[str, str], constants: dict[str, int],
            scalars: dict[str, int | float], size_names: list[str]) -> tuple[list[str], list[str], str, list[str]]:
    """(grid, block, shared bytes, notes on what was guessed, each starting with its key) from the
    launch site, following `dim3` variables and host locals to their values."""
    notes: list[str] = []
    block = ["256"]
    if site is not None:
        block = [_expand(d, host, mapping, constants) for d in _dims_of(site.block.text, host)]
        if not all(_valid(b, scalars) for b in block):
            block = [str(v) if v else "256" for v in (site.block_dims or (256,))]
            notes.append(f"block = {_dims_text(block)} is a guess: `{site.block.text}` is not a size of the spec")
        if not _block_allowed(block, scalars):
            shown = _dims_text(block)
            block = ["16", "16"] if len(block) > 1 else ["256"]
            notes.append(f"block = {_dims_text(block)} is a guess: `{site.block.text}` gives {shown}, more "
                         f"threads than a block can have")
    else:
        notes.append("block = [256] is a guess: no launch of the kernel in the file")
    size = size_names[0] if size_names else None
    fallback = [f"ceil_div({size}, {block[0]})" if size else "1"]
    if len(block) > 1 and len(size_names) > 1:
        fallback.append(f"ceil_div({size_names[1]}, {block[1]})")
    grid = fallback
    if site is not None:
        grid = [_expand(d, host, mapping, constants) for d in _dims_of(site.grid.text, host)]
        if not all(_valid(g, scalars) for g in grid):
            grid = fallback
            notes.append(f"grid = {_dims_text(grid)} is a guess: `{site.grid.text}` is not over the spec's sizes")
    else:
        notes.append(f"grid = {_dims_text(grid)} is a guess")
    shared = "0"
    if site is not None and site.shared is not None:
        shared = _expand(site.shared.text, host, mapping, constants)
        if not (_valid(shared, scalars) or shared.strip() == "0"):
            notes.append(f"shared_bytes = 0 is a guess: `{site.shared.text}` is not over the spec's sizes")
            shared = "0"
    return grid, block, shared, notes


def _block_allowed(block: list[str], scalars: dict[str, int | float]) -> bool:
    values = [int(evaluate(b, scalars)) for b in block if _valid(b, scalars)]
    if len(values) != len(block):
        return False
    total = 1
    for value in values:
        total *= value
    return total <= MAX_THREADS_PER_BLOCK and all(v <= m for v, m in zip(values, MAX_BLOCK_DIM, strict=False))
