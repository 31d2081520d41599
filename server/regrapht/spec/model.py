"""The kernel benchmark spec (`*.regrapht.toml`): its data model and its parser.

Owns reading a spec (docs/kernel-spec.md, a fixed interface) into `Spec`/`KernelSpec`/
`ArgSpec`, with every error naming the file and the spec key (`kernel[0].arg[2].count`), and
finding the spec that belongs to a source file. Evaluation with concrete scalars is `resolve.py`.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from regrapht.errors import InputError
from regrapht.inputs import MAX_SPEC_BYTES, read_text_bounded
from regrapht.spec.ctypes_ import CType, parse_ctype, struct_pointer_type, struct_type
from regrapht.spec.expr import names_in, shown
from regrapht.spec.init import InitSpec, parse_init_spec

Role = Literal["in", "out", "inout"]
Expr = str | int | float

DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = 1e-6


@dataclass(frozen=True)
class ArgSpec:
    name: str
    ctype: CType
    value: Expr | None = None  # scalars
    count: Expr | None = None  # pointers
    init: InitSpec | None = None
    role: Role | None = None  # pointers
    expect: InitSpec | None = None  # extension: `file(...)`, the output a captured launch left here
    raw: bytes | None = None  # extension: a struct passed by value, its bytes as captured
    align: int = 1  # a struct's alignment in the parameter buffer

    @property
    def is_pointer(self) -> bool:
        return self.ctype.pointer

    @property
    def is_struct(self) -> bool:
        return self.ctype.is_struct

    @property
    def is_scalar(self) -> bool:
        """A number the launch and the counts may name (not a pointer, not a struct)."""
        return not self.ctype.pointer and not self.ctype.is_struct


@dataclass(frozen=True)
class KernelSpec:
    name: str  # as written, e.g. "scale<float, 4>"
    grid: tuple[Expr, ...]
    block: tuple[Expr, ...]
    args: tuple[ArgSpec, ...]
    shared_bytes: Expr = "0"
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    index: int = 0  # position in the spec file, for keys
    file: str | None = None
    flops: Expr | None = None  # optional extension: floating-point operations of one launch
    guessed: tuple[str, ...] = ()  # optional extension: the keys whose values are guesses ("x.count", "grid")

    @property
    def base_name(self) -> str:
        return self.name.split("<", 1)[0].strip()

    @property
    def template_args(self) -> str | None:
        return self.name[self.name.index("<") + 1: self.name.rindex(">")].strip() if "<" in self.name else None

    def key(self, suffix: str = "") -> str:
        return f"kernel[{self.index}]{suffix}"

    def signature(self) -> str:
        return f"{self.name}({', '.join(a.ctype.spelled() for a in self.args)})"


@dataclass(frozen=True)
class Spec:
    kernels: tuple[KernelSpec, ...]
    file: str | None
    digest: str  # sha256 of the spec text

    def kernel(self, name: str) -> KernelSpec:
        for kernel in self.kernels:
            if kernel.name == name:
                return kernel
        matches = [k for k in self.kernels if k.base_name == name.split("<", 1)[0].strip()]
        if len(matches) == 1:
            return matches[0]
        known = ", ".join(k.name for k in self.kernels) or "none"
        raise InputError(f"no kernel {name!r} in the spec (it has: {known})", file=self.file)


_TOP_KEYS = ("kernel",)
_KERNEL_KEYS = ("name", "grid", "block", "shared_bytes", "rtol", "atol", "arg", "flops", "guessed")
GUESSABLE_KERNEL_KEYS = ("name", "grid", "block", "shared_bytes")
GUESSABLE_ARG_KEYS = ("value", "count", "init", "role", "bytes")
_ARG_KEYS = ("name", "type", "value", "count", "init", "role", "expect", "bytes", "align", "element_bytes")
MAX_STRUCT_BYTES = 4096  # CUDA's parameter space is 4 KiB (32 KiB since 12.1): a struct at most this


def _check_keys(table: dict[str, object], known: tuple[str, ...], key: str, file: str | None) -> None:
    """An unknown key is an error with a "did you mean" hint: a typo such as `blok` must not
    silently fall back to a default."""
    for name in table:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(known)})"
            raise InputError(f"unknown key {name!r}{hint}", file=file,
                             key=f"{key}.{name}" if key else name)


def _line_of(message: str) -> int | None:
    match = re.search(r"line (\d+)", message)
    return int(match.group(1)) if match else None


def spec_path_for(source: Path) -> Path:
    """`foo.cu` -> `foo.regrapht.toml` beside it."""
    return source.with_name(source.name.rsplit(".", 1)[0] + ".regrapht.toml")


def load_spec(path: Path) -> Spec:
    return parse_spec(read_text_bounded(path, MAX_SPEC_BYTES, "spec"), file=str(path))


def parse_spec(text: str, *, file: str | None = None) -> Spec:
    # imported here: tomllib compiles its regular expressions on import (~30 ms), which the
    # language server would otherwise pay at start-up before it has any spec to read
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"not valid TOML: {error}", file=file, line=_line_of(str(error))) from error
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively: `a = [[[[...]]]]`.
        raise InputError("not valid TOML: arrays or inline tables nested too deeply", file=file) from None
    _check_keys(data, _TOP_KEYS, "", file)
    kernels = data.get("kernel")
    if not isinstance(kernels, list) or not kernels:
        raise InputError("a spec needs at least one [[kernel]] table", file=file, key="kernel")
    parsed = tuple(_parse_kernel(k, i, file) for i, k in enumerate(kernels))
    names = [k.name for k in parsed]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise InputError(f"kernel {name!r} appears twice", file=file, key=f"kernel[{i}].name")
    return Spec(parsed, file, hashlib.sha256(text.encode()).hexdigest())


def _dims(value: object, key: str, file: str | None) -> tuple[Expr, ...]:
    if isinstance(value, str | int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not 1 <= len(value) <= 3:
        raise InputError("must be a list of 1 to 3 integer expressions", file=file, key=key)
    for i, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, str | int):
            raise InputError(f"must be an integer expression, got {item!r}", file=file, key=f"{key}[{i}]")
    return tuple(value)


def _parse_kernel(table: object, index: int, file: str | None) -> KernelSpec:
    key = f"kernel[{index}]"
    if not isinstance(table, dict):
        raise InputError("must be a table", file=file, key=key)
    _check_keys(table, _KERNEL_KEYS, key, file)
    name = table.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"\s*[A-Za-z_][A-Za-z_0-9:]*\s*(<.*>)?\s*", name):
        raise InputError(f"needs a kernel name string, got {name!r}", file=file, key=f"{key}.name")
    for required in ("grid", "block"):
        if required not in table:
            raise InputError(f"missing {required!r}", file=file, key=f"{key}.{required}")
    grid = _dims(table["grid"], f"{key}.grid", file)
    block = _dims(table["block"], f"{key}.block", file)
    shared = table.get("shared_bytes", "0")
    if isinstance(shared, bool) or not isinstance(shared, str | int):
        raise InputError("must be an integer expression", file=file, key=f"{key}.shared_bytes")
    tolerances = {}
    for tol, default in (("rtol", DEFAULT_RTOL), ("atol", DEFAULT_ATOL)):
        value = table.get(tol, default)
        if (isinstance(value, bool) or not isinstance(value, int | float) or value < 0
                or (isinstance(value, float) and not math.isfinite(value))):
            raise InputError(f"must be a finite non-negative number, got {shown(str(value))}", file=file,
                             key=f"{key}.{tol}")
        try:
            tolerances[tol] = float(value)
        except OverflowError:
            raise InputError(f"must be a finite non-negative number, got {shown(str(value))}", file=file,
                             key=f"{key}.{tol}") from None
    raw_args = table.get("arg", [])
    if not isinstance(raw_args, list):
        raise InputError("must be an array of tables ([[kernel.arg]])", file=file, key=f"{key}.arg")
    args: list[ArgSpec] = []
    for i, raw in enumerate(raw_args):
        args.append(_parse_arg(raw, f"{key}.arg[{i}]", args, file))
    scalars = {a.name for a in args if a.is_scalar}
    for dim_key, dims in (("grid", grid), ("block", block)):
        for i, dim in enumerate(dims):
            _check_names(dim, scalars, f"{key}.{dim_key}[{i}]", file)
    _check_names(shared, scalars, f"{key}.shared_bytes", file)
    flops = table.get("flops")
    if flops is not None:
        if isinstance(flops, bool) or not isinstance(flops, str | int | float):
            raise InputError("must be an expression", file=file, key=f"{key}.flops")
        _check_names(flops, scalars, f"{key}.flops", file)
    for i, arg in enumerate(args):
        if arg.count is not None:
            _check_names(arg.count, scalars, f"{key}.arg[{i}].count", file)
        if arg.init is not None:
            for arg_expr in arg.init.args:
                _check_names(arg_expr, scalars, f"{key}.arg[{i}].init", file)
    guessed = _guessed(table.get("guessed", []), args, f"{key}.guessed", file)
    kernel = KernelSpec(
        name=name.strip(), grid=grid, block=block, args=tuple(args), shared_bytes=shared,
        rtol=tolerances["rtol"], atol=tolerances["atol"], index=index, file=file, flops=flops, guessed=guessed,
    )
    # Evaluate once with the spec's values so that a bad expression is reported now, by key.
    from regrapht.spec.resolve import resolve

    resolve(kernel)
    return kernel


def _guessed(value: object, args: list[ArgSpec], key: str, file: str | None) -> tuple[str, ...]:
    """`guessed = ["grid", "x.count", "n.value"]`: keys of this kernel whose values are guesses."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError("must be a list of key names such as \"grid\" or \"x.count\"", file=file, key=key)
    names = {a.name for a in args}
    for i, entry in enumerate(value):
        if entry in GUESSABLE_KERNEL_KEYS:
            continue
        arg, _, field = entry.partition(".")
        if arg not in names or field not in GUESSABLE_ARG_KEYS:
            raise InputError(f"{entry!r} is not a key of this kernel (one of {', '.join(GUESSABLE_KERNEL_KEYS)}, "
                             f"or ARG.{'/'.join(GUESSABLE_ARG_KEYS)} for one of its parameters)",
                             file=file, key=f"{key}[{i}]")
    return tuple(value)


def _check_names(expr: Expr, scalars: set[str], key: str, file: str | None) -> None:
    for name in sorted(names_in(expr)):
        if name not in scalars:
            known = ", ".join(sorted(scalars)) or "none"
            close = difflib.get_close_matches(name, sorted(scalars), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(
                f"unknown name {name!r} in expression {shown(str(expr))} (the kernel's scalars: {known}){hint}",
                file=file, key=key,
            )


def _parse_arg(raw: object, key: str, earlier: list[ArgSpec], file: str | None) -> ArgSpec:
    if not isinstance(raw, dict):
        raise InputError("must be a table", file=file, key=key)
    _check_keys(raw, _ARG_KEYS, key, file)
    name = raw.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", name):
        raise InputError(f"needs a parameter name, got {name!r}", file=file, key=f"{key}.name")
    if any(a.name == name for a in earlier):
        raise InputError(f"parameter {name!r} appears twice", file=file, key=f"{key}.name")
    if "type" not in raw:
        raise InputError("missing 'type'", file=file, key=f"{key}.type")
    if struct_type(raw["type"], 1) is not None:
        return _parse_struct_arg(raw, name, key, file)
    for other in ("bytes", "align"):
        if other in raw:
            raise InputError(f"{other!r} is for a struct passed by value (type = \"struct NAME\")", file=file,
                             key=f"{key}.{other}")
    if struct_pointer_type(raw["type"], 1) is not None:
        size = raw.get("element_bytes")
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_STRUCT_BYTES:
            raise InputError(f"a buffer of structs needs 'element_bytes': the size of one struct in bytes (1 to "
                             f"{MAX_STRUCT_BYTES}), got {size!r}", file=file, key=f"{key}.element_bytes")
        ctype = struct_pointer_type(raw["type"], size)
        assert ctype is not None
    elif "element_bytes" in raw:
        raise InputError("'element_bytes' is for a buffer of structs (type = \"struct NAME*\")", file=file,
                         key=f"{key}.element_bytes")
    else:
        ctype = parse_ctype(raw["type"], file=file, key=f"{key}.type")
    if not ctype.pointer:
        for other in ("count", "init", "role", "expect"):
            if other in raw:
                raise InputError(f"{other!r} is for pointers; scalar {name!r} takes 'value'",
                                 file=file, key=f"{key}.{other}")
        if "value" not in raw:
            raise InputError(f"scalar {name!r} needs a 'value'", file=file, key=f"{key}.value")
        value = raw["value"]
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, str | int | float):
            raise InputError(f"must be an expression, got {value!r}", file=file, key=f"{key}.value")
        _check_names(value, {a.name for a in earlier if a.is_scalar}, f"{key}.value", file)
        return ArgSpec(name=name, ctype=ctype, value=value)
    if "value" in raw:
        raise InputError(f"pointer {name!r} takes 'count' and 'init', not 'value'", file=file, key=f"{key}.value")
    if "count" not in raw:
        raise InputError(f"pointer {name!r} needs a 'count'", file=file, key=f"{key}.count")
    count = raw["count"]
    if isinstance(count, bool) or not isinstance(count, str | int):
        raise InputError(f"must be an integer expression, got {count!r}", file=file, key=f"{key}.count")
    role = raw.get("role", "in" if ctype.const else "inout")
    if role not in ("in", "out", "inout"):
        raise InputError(f"role must be in, out or inout, got {role!r}", file=file, key=f"{key}.role")
    if ctype.const and role != "in":
        raise InputError(f"const pointer {name!r} can only have role 'in'", file=file, key=f"{key}.role")
    init = None
    if "init" in raw:
        init = parse_init_spec(raw["init"], file=file, key=f"{key}.init")
    elif role in ("in", "inout"):
        raise InputError(f"{role} pointer {name!r} needs an 'init'", file=file, key=f"{key}.init")
    expect = None
    if "expect" in raw:
        if role == "in":
            raise InputError(f"'expect' is the captured output of an out or inout pointer; {name!r} is 'in'",
                             file=file, key=f"{key}.expect")
        expect = parse_init_spec(raw["expect"], file=file, key=f"{key}.expect")
        if expect.kind != "file":
            raise InputError("'expect' takes file(PATH.npy), the output the original must reproduce",
                             file=file, key=f"{key}.expect")
    return ArgSpec(name=name, ctype=ctype, count=count, init=init, role=role, expect=expect)


def _parse_struct_arg(raw: dict[str, object], name: str, key: str, file: str | None) -> ArgSpec:
    """`type = "struct NAME"`, `bytes = "HEX"` (its bytes), optional `align` (default: the largest
    power of two up to 16 that divides its size): a struct passed by value, as captured."""
    for other in ("value", "count", "init", "role", "expect"):
        if other in raw:
            raise InputError(f"{other!r} is not for struct {name!r}: it takes 'bytes' (and 'align')", file=file,
                             key=f"{key}.{other}")
    data = raw.get("bytes")
    if not isinstance(data, str) or not re.fullmatch(r"(?:[0-9a-fA-F]{2})+", data):
        raise InputError(f"struct {name!r} needs 'bytes': its bytes in hexadecimal, two digits each", file=file,
                         key=f"{key}.bytes")
    value = bytes.fromhex(data)
    if len(value) > MAX_STRUCT_BYTES:
        raise InputError(f"struct {name!r} has {len(value)} bytes; a kernel parameter has at most {MAX_STRUCT_BYTES}",
                         file=file, key=f"{key}.bytes")
    natural = max(a for a in (1, 2, 4, 8, 16) if len(value) % a == 0)
    align = raw.get("align", natural)
    if isinstance(align, bool) or not isinstance(align, int) or align not in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        raise InputError(f"align must be a power of two from 1 to 256, got {align!r}", file=file, key=f"{key}.align")
    ctype = struct_type(raw["type"], len(value))
    assert ctype is not None
    return ArgSpec(name=name, ctype=ctype, raw=value, align=align)
