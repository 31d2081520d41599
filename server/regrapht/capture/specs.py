"""Benchmark specs from captured launches: one `NAME.regrapht.toml` per kernel and launch shape.

Owns turning a `manifest.Launch` into a spec (docs/kernel-spec.md, docs/capture.md): the kernel's
name and parameter types from the demangled signature (a template instance as the mangled name
spells it), the exact grid, block, dynamic shared memory and scalar values, each pointer's count
from its allocation (elements from the pointer to the allocation's end), its role from the
observed write set (never written: `in`; written: `inout`), and with data the inputs as
`file(captures/....npy)` and the outputs as `expect = "file(...)"`, sliced from the allocation
snapshots; a struct passed by value as its bytes (`type = "struct NAME"`, `bytes`, `align`). A
kernel whose parameters the format cannot express (a pointer to a struct, an `extern "C"` kernel
whose name carries no types) is skipped with the reason; its parameter bytes stay in
launches.jsonl. Every written spec is read back with the spec parser before it counts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from regrapht.capture.manifest import Allocation, Launch, SpecEntry
from regrapht.capture.sources import SourceIndex
from regrapht.errors import InputError
from regrapht.spec.ctypes_ import CType, parse_ctype, struct_type
from regrapht.spec.expr import evaluate, names_in
from regrapht.spec.infer import infer_spec
from regrapht.spec.model import load_spec, parse_spec
from regrapht.validate.mangle import normalise_signature, split_top

SPECS = "specs"
CAPTURES = "captures"  # beside the specs: the .npy data their file() inputs name
# A float output at least this many times smaller than the kernel's largest float input is a
# reduction: its sums depend on the order of the additions (atomics, a candidate's tree), so the
# spec takes the tolerances examples/reduce_sum.regrapht.toml uses.
REDUCTION_RATIO = 64
REDUCTION_RTOL = 1e-3
REDUCTION_ATOL = 1e-2


@dataclass(frozen=True)
class Skipped:
    kernel: str
    launch: int
    reason: str


@dataclass
class Written:
    entries: list[SpecEntry] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


@dataclass(frozen=True)
class Typed:
    """The kernel's name as a spec writes it and its parameter types, from the demangled signature."""

    name: str
    params: tuple[CType, ...]


def typed_signature(launch: Launch) -> Typed | str:
    """The spec name and parameter types of a launch's kernel, or why they cannot be known."""
    demangled = launch.demangled
    if demangled == launch.mangled and "(" not in demangled:
        return (f"{launch.mangled} is an extern \"C\" kernel: its name does not carry its parameter types, "
                "so no spec can be written (the parameter bytes are in launches.jsonl)")
    head = re.match(r"\s*(?:void\s+)?([A-Za-z_][\w:]*)\s*(<.*>)?\s*\(", demangled)
    parsed = normalise_signature(demangled)
    params = parsed[2] if parsed is not None else _with_structs(launch) if head and not head.group(2) else None
    if head is None or params is None:
        params_text = demangled[demangled.find("(") + 1: demangled.rfind(")")]
        return (f"parameters ({params_text}) include a type the spec format cannot express (a pointer to a "
                "struct, a pointer to pointer, a reference, a struct in a template kernel): recorded as bytes "
                "in launches.jsonl only")
    name = head.group(1) + (head.group(2) or "")
    return Typed(re.sub(r"\s+", " ", name).strip(), params)


def _with_structs(launch: Launch) -> tuple[CType, ...] | None:
    """The parameter types of a non-template kernel whose signature names a struct passed by value
    (`step(Params, float*)`): the struct as its bytes, sized by the driver's layout; None when a
    type is neither a spec type nor a plain class name."""
    inner = launch.demangled[launch.demangled.find("(") + 1: launch.demangled.rfind(")")].strip()
    parts = split_top(inner) if inner and inner != "void" else []
    if len(parts) != len(launch.params):
        return None
    types: list[CType] = []
    for part, param in zip(parts, launch.params, strict=True):
        try:
            types.append(parse_ctype(part))
            continue
        except InputError:
            pass
        struct = struct_type(f"struct {part}", param.size)
        if struct is None or param.size <= 0:
            return None
        types.append(struct)
    return tuple(types)


def struct_alignments(typed: Typed, launch: Launch) -> dict[int, int] | None:
    """Per struct parameter, an alignment that puts it where the driver's layout has it when the
    parameters are laid out in order (scalars and pointers at multiples of their size); None when no
    choice reproduces the captured offsets."""
    aligns: dict[int, int] = {}
    end = 0
    for i, (ctype, param) in enumerate(zip(typed.params, launch.params, strict=True)):
        size = param.size
        if ctype.is_struct:
            align = next((a for a in (16, 8, 4, 2, 1) if param.offset % a == 0 and -(-end // a) * a == param.offset),
                         None)
            if align is None:
                return None
            aligns[i] = align
        elif -(-end // size) * size != param.offset:
            return None
        end = param.offset + size
    return aligns


def file_stem(name: str) -> str:
    """`ns::blur<float, 3>` -> `ns_blur_float_3`: a spec file name for a kernel."""
    stem = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")
    return stem[:120] or "kernel"


def _scalar_value(param: bytes, ctype: CType) -> str | None:
    """The scalar's value as a spec expression that reproduces it exactly, None for NaN/inf."""
    value = np.frombuffer(param[: np.dtype(ctype.info.dtype).itemsize], dtype=ctype.info.dtype)[0]
    if ctype.info.dtype == "bool":
        return "1" if bool(value) else "0"
    if np.dtype(ctype.info.dtype).kind == "f":
        number = float(value)
        if not math.isfinite(number):
            return None
        return repr(number)  # the double nearest the float32 is the float32 again
    return str(int(value))


def _count_expression(count: int, scalars: dict[str, int]) -> str | int:
    """`count` spelled with a scalar (or a product of two) of the same value, else the number."""
    for name, value in scalars.items():
        if value == count:
            return name
    names = list(scalars)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]] + [(a, a) for a in names]
    for a, b in pairs:  # two different scalars first (`width * height`), then a square
        if scalars[a] > 1 and scalars[b] > 1 and scalars[a] * scalars[b] == count:
            return f"{a} * {b}"
    return count


def _toml(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)


def _dims(values: Sequence[int]) -> list[int]:
    dims = list(values)
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    return dims


def _reproduces(expression: str, value: int, scalars: dict[str, int]) -> bool:
    if not names_in(expression) <= set(scalars):
        return False
    try:
        return evaluate(expression, scalars) == value
    except InputError:
        return False


def grid_expressions(grid: Sequence[int], block: Sequence[int], scalars: dict[str, int],
                     site: Sequence[str] = ()) -> list[int | str]:
    """The captured grid as expressions over the kernel's integer scalars where one reproduces it
    exactly (`(cols + 31) / 32` for 128): a rewrite that changes the block shape recomputes the grid
    from such an expression, a literal grid pins every block-shape rewrite out. Per dimension: the
    launch site's expression (`site`, over the kernel's parameter names), else the one ceiling
    division by the block that a single scalar gives; the literal where neither holds."""
    dims = _dims(grid)
    texts: list[int | str] = []
    for d, value in enumerate(dims):
        size = block[d] if d < len(block) else 1
        ceil = [f"({name} + {size - 1}) / {size}" if size > 1 else name for name, v in scalars.items()
                if v > 0 and -(-v // size) == value]
        if d < len(site) and _reproduces(str(site[d]), value, scalars):
            texts.append(str(site[d]))
        elif value > 1 and len(ceil) == 1:
            texts.append(ceil[0])
        else:
            texts.append(value)
    return texts


def launch_site_grid(source: Path, kernel: str) -> tuple[str, ...]:
    """The grid expressions of the kernel's first launch in `source`, over its parameter names
    (spec inference's reading of the launch site); () where there is none to read."""
    try:
        text = source.read_text(encoding="utf-8", errors="replace")
        inferred = parse_spec(infer_spec(text, kernel, file=str(source))).kernels[0]
    except (InputError, OSError, IndexError):
        return ()
    # a grid inference guessed (no launch site over the kernel's parameters) is no reading of one
    return () if "grid" in inferred.guessed else tuple(str(g) for g in inferred.grid)


@dataclass(frozen=True)
class Shape:
    """What makes two launches of one kernel the same benchmark: launch, scalars, buffer counts."""

    mangled: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int
    scalars: tuple[bytes, ...]
    counts: tuple[int, ...]


def shape_of(launch: Launch) -> Shape:
    scalars, counts = [], []
    for param in launch.params:
        if param.allocation is not None and param.allocation < len(launch.allocations):
            counts.append(launch.allocations[param.allocation].size - param.alloc_offset)
        else:
            scalars.append(param.data)
    return Shape(launch.mangled, launch.grid, launch.block, launch.shared_bytes, tuple(scalars), tuple(counts))


def _written_in(allocation: Allocation, start: int, nbytes: int) -> bool | None:
    """Whether a byte in [start, start + nbytes) of the allocation changed; None if not observed."""
    if allocation.written is None:
        return None
    w = allocation.written
    return w.bytes > 0 and w.first < start + nbytes and w.last >= start


class SpecWriter:
    """Writes the specs of one capture directory (`specs/`, data under `specs/captures/`)."""

    def __init__(self, directory: Path, program: str, sources: SourceIndex | None = None, *,
                 rtol: float | None = None, atol: float | None = None) -> None:
        self.directory = directory
        self.program = program
        self.sources = sources or SourceIndex(None)
        self.rtol = rtol  # given: every spec's tolerances (`regrapht capture --rtol/--atol`)
        self.atol = atol
        self.specs = directory / SPECS
        self.data = self.specs / CAPTURES

    def write_all(self, launches: Sequence[Launch]) -> Written:
        result = Written()
        groups: dict[Shape, list[Launch]] = {}
        for launch in launches:
            groups.setdefault(shape_of(launch), []).append(launch)
        used: dict[str, int] = {}
        for members in groups.values():
            chosen = next((m for m in members if m.complete and not m.error), members[0])
            typed = typed_signature(chosen)
            if isinstance(typed, str):
                result.skipped.append(Skipped(chosen.demangled, chosen.id, typed))
                continue
            stem = file_stem(typed.name)
            used[stem] = used.get(stem, 0) + 1
            name = stem if used[stem] == 1 else f"{stem}.{used[stem]}"
            outcome = self.write_one(chosen, typed, name, [m.id for m in members])
            if isinstance(outcome, Skipped):
                result.skipped.append(outcome)
            else:
                result.entries.append(outcome)
        return result

    def write_one(self, launch: Launch, typed: Typed, name: str, members: list[int]) -> SpecEntry | Skipped:
        def skip(reason: str) -> Skipped:
            return Skipped(typed.name, launch.id, reason)

        if launch.error:
            return skip(f"launch {launch.id} failed in the program: {launch.error}")
        if len(launch.params) != len(typed.params):
            return skip(f"the driver reports {len(launch.params)} parameters, the signature has {len(typed.params)} "
                        f"({launch.param_info} layout)")
        declared = self.sources.find(typed.name, len(typed.params))
        names = list(declared.names) if declared is not None and declared.names else \
            [f"p{i}" for i in range(len(typed.params))]
        scalars: dict[str, int] = {}
        lines = [f"# Captured by regrapht from `{self.program}`: launch {launch.id} of {typed.name} "
                 f"({len(members)} launch{'es' if len(members) != 1 else ''} of this shape recorded: "
                 f"{', '.join(map(str, members[:8]))}{', ...' if len(members) > 8 else ''}).",
                 f"# {launch.demangled}",
                 "# Launch and scalars are exact; counts run to the end of each pointer's allocation."]
        if declared is not None:
            lines.append(f"# Parameter names from {declared.file}:{declared.decl.line}.")
        else:
            lines.append("# Parameters are named by position: no source under the program's folder declares "
                         "this kernel (`optimize --capture` renames them after the file it optimizes).")
        for ctype, param, scalar in zip(typed.params, launch.params, names, strict=True):
            if not ctype.pointer and not ctype.is_struct and ctype.info.integer and param.size == np.dtype(ctype.info.dtype).itemsize:
                value = _scalar_value(param.data, ctype)  # every scalar, so a count may name a later one
                if value is not None and ctype.base != "bool":
                    scalars[scalar] = int(value)
        args: list[list[tuple[str, object]]] = []
        counts: dict[str, int] = {}  # pointer -> element count (an output's: the extent written)
        seen_allocations: dict[int, str] = {}
        data_used = False
        aligns = struct_alignments(typed, launch) if any(c.is_struct for c in typed.params) else {}
        if aligns is None:
            return skip("the driver's parameter layout cannot be reproduced by laying the parameters out in order")
        for i, (ctype, param) in enumerate(zip(typed.params, launch.params, strict=True)):
            arg: list[tuple[str, object]] = [("name", names[i]), ("type", ctype.spelled())]
            if ctype.is_struct:  # passed by value: its bytes as the program passed them
                arg = [("name", names[i]), ("type", f"struct {ctype.base}"), ("bytes", param.data.hex()),
                       ("align", aligns[i])]
                args.append(arg)
                continue
            if not ctype.pointer:
                if param.size != np.dtype(ctype.info.dtype).itemsize:
                    return skip(f"parameter {i} is {ctype.spelled()} but {param.size} bytes were passed")
                value = _scalar_value(param.data, ctype)
                if value is None:
                    return skip(f"scalar parameter {i} is not finite: a spec value cannot spell it")
                arg.append(("value", value))
                args.append(arg)
                continue
            if param.allocation is None or param.allocation >= len(launch.allocations):
                pointer = int.from_bytes(param.data[:8], "little") if len(param.data) >= 8 else 0
                what = "null" if pointer == 0 else f"0x{pointer:x}, which is not in device memory (host or mapped?)"
                return skip(f"pointer parameter {i} is {what}: a spec buffer cannot stand for it")
            allocation = launch.allocations[param.allocation]
            itemsize = np.dtype(ctype.info.dtype).itemsize
            count = (allocation.size - param.alloc_offset) // itemsize
            if count <= 0:
                return skip(f"pointer parameter {i} points at the end of its allocation")
            if param.allocation in seen_allocations:
                lines.append(f"# {names[i]} and {seen_allocations[param.allocation]} point into one allocation; "
                             "the replay gives each its own copy")
            seen_allocations.setdefault(param.allocation, names[i])
            arg.append(("count", _count_expression(count, scalars)))
            counts[names[i]] = count
            nbytes = count * itemsize
            written = _written_in(allocation, param.alloc_offset, nbytes)
            if allocation.managed:
                lines.append(f"# {names[i]} is managed memory: the replay uses device memory")
            before = self._slice(allocation.before, param.alloc_offset, count, ctype.info.dtype)
            stem = f"L{launch.id:06d}-{names[i]}"
            if written is None:
                role = "in" if ctype.const else "inout"
                if before is not None:  # the program stopped during the launch: inputs, but no write set
                    lines.append(f"# {names[i]}: data from before the launch; not seen whether it was written "
                                 f"(the launch did not return), role {role} from its constness")
                    arg.append(("init", f"file({CAPTURES}/{self._save(stem, before)})"))
                    data_used = True
                else:
                    reason = allocation.note or "captured without --data"
                    lines.append(f"# {names[i]}: no data ({reason}): drawn at random, role {role} from its constness")
                    arg.append(("init", "randint(0, 2)" if ctype.info.integer else "uniform(-1, 1)"))
                arg.append(("role", role))
                args.append(arg)
                continue
            if before is None:
                return skip(f"the snapshot of {names[i]}'s allocation is missing or short")
            arg.append(("init", f"file({CAPTURES}/{self._save(stem, before)})"))
            data_used = True
            if written and ctype.const:
                lines.append(f"# {names[i]} is const but its bytes changed during the launch (another pointer wrote "
                             "them?): kept as in")
            if written and not ctype.const:
                assert allocation.written is not None
                first = max(allocation.written.first - param.alloc_offset, 0) // itemsize
                last = min(allocation.written.last - param.alloc_offset, nbytes - 1) // itemsize
                counts[names[i]] = last - first + 1  # a reduction's output: the elements it wrote
                after = self._slice(allocation.after, param.alloc_offset, count, ctype.info.dtype)
                if after is None:
                    return skip(f"the snapshot of {names[i]}'s allocation after the launch is missing or short")
                arg.append(("role", "inout"))
                arg.append(("expect", f"file({CAPTURES}/{self._save(stem + '.after', after)})"))
            else:
                arg.append(("role", "in"))
            args.append(arg)
        tolerances = self._tolerances(args, counts, lines)
        text = "\n".join(lines) + "\n[[kernel]]\n"
        site = () if declared is None else launch_site_grid(declared.file, typed.name)
        grid = grid_expressions(launch.grid, launch.block, scalars, site)
        text += f"name = {_toml(typed.name)}\ngrid = {_toml(grid)}\nblock = {_toml(_dims(launch.block))}\n"
        if launch.shared_bytes:
            text += f"shared_bytes = {_toml(str(launch.shared_bytes))}\n"
        text += "".join(f"{key} = {value!r}\n" for key, value in tolerances)
        for arg in args:
            text += "\n[[kernel.arg]]\n" + "".join(f"{key} = {_toml(value)}\n" for key, value in arg)
        path = self.specs / f"{name}.regrapht.toml"
        self.specs.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        try:
            load_spec(path)
        except InputError as error:
            path.unlink()
            return skip(f"the written spec does not read back: {error}")
        return SpecEntry(typed.name, launch.mangled, str(path.relative_to(self.directory)), tuple(members),
                         launch.grid, launch.block, data_used,
                         None if declared is None else str(declared.file.resolve()))

    def _tolerances(self, args: list[list[tuple[str, object]]], counts: dict[str, int],
                    lines: list[str]) -> list[tuple[str, float]]:
        """`rtol`/`atol` of the spec: the given ones, a reduction's, or none (the format's defaults)."""
        if self.rtol is not None or self.atol is not None:
            return [(key, value) for key, value in (("rtol", self.rtol), ("atol", self.atol)) if value is not None]
        floats_in: list[int] = []
        floats_out: list[int] = []
        for arg in args:
            table = dict(arg)
            kind = str(table["type"]).replace("const ", "").rstrip("*")
            if str(table["name"]) not in counts or kind not in ("float", "double"):
                continue
            (floats_out if table.get("role") == "inout" else floats_in).append(counts[str(table["name"])])
        if floats_in and floats_out and min(floats_out) * REDUCTION_RATIO <= max(floats_in):
            lines.append(f"# A reduction ({max(floats_in)} inputs into {min(floats_out)} outputs): float sums depend "
                         "on their order, so the tolerances of a reduction.")
            return [("rtol", REDUCTION_RTOL), ("atol", REDUCTION_ATOL)]
        return []

    def _slice(self, file: str | None, offset: int, count: int, dtype: str) -> np.ndarray | None:
        if file is None:
            return None
        path = self.directory / file
        nbytes = count * np.dtype(dtype).itemsize
        try:
            with path.open("rb") as handle:
                handle.seek(offset)
                raw = handle.read(nbytes)
        except OSError:
            return None
        if len(raw) != nbytes:
            return None
        return np.frombuffer(raw, dtype=dtype)

    def _save(self, stem: str, array: np.ndarray) -> str:
        self.data.mkdir(parents=True, exist_ok=True)
        name = f"{stem}.npy"
        np.save(self.data / name, array, allow_pickle=False)
        return name
