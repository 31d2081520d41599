"""A kernel spec made concrete: scalar values, buffer sizes and the launch configuration.

Owns evaluating a `KernelSpec` (optionally with overridden scalars, e.g. a smaller odd size,
and a candidate's own launch configuration) into plain numbers, and choosing the extra
"not a multiple of the block size" problem size that every check also runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from regrapht.errors import InputError
from regrapht.gpu_arch import MAX_SHARED_BYTES_PER_BLOCK
from regrapht.spec.draw import NpyError, check_npy
from regrapht.spec.expr import Number, evaluate, evaluate_int, names_in
from regrapht.spec.init import Init, InitSpec
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import KernelSpec

MAX_DIM = (2**31 - 1, 65535, 65535)  # grid dimensions, every CUDA device
MAX_BLOCK_DIM = (1024, 1024, 64)  # block dimensions, every CUDA device
MAX_THREADS_PER_BLOCK = 1024
MAX_BUFFER_BYTES = 2**63 - 1  # what a signed 64-bit byte count can address


@dataclass(frozen=True)
class Buffer:
    name: str
    dtype: str
    count: int
    role: str
    init: Init | None
    expect: str | None = None  # extension: the .npy file of the output a captured launch left

    @property
    def nbytes(self) -> int:
        return self.count * np.dtype(self.dtype).itemsize


@dataclass(frozen=True)
class ResolvedKernel:
    name: str
    scalars: dict[str, Number]  # every scalar argument, cast to its C type
    args: tuple[tuple[str, str], ...]  # (name, "scalar"|"buffer") in parameter order
    scalar_dtypes: dict[str, str]
    buffers: tuple[Buffer, ...]
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    rtol: float
    atol: float
    flops: float | None = None
    structs: dict[str, tuple[bytes, int]] = field(default_factory=dict)  # struct args: (bytes, alignment)

    @property
    def bytes_moved(self) -> int:
        """The fewest bytes one launch must move: inputs read once, outputs written once."""
        factor = {"in": 1, "out": 1, "inout": 2}
        return sum(b.nbytes * factor[b.role] for b in self.buffers)

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    def to_wire(self) -> dict[str, object]:
        """Plain data for the GPU worker (msgpack)."""
        return {
            "name": self.name,
            "args": [list(a) for a in self.args],
            "scalars": {k: (float(v) if np.dtype(self.scalar_dtypes[k]).kind == "f" else int(v))
                        for k, v in self.scalars.items()},
            "scalar_dtypes": self.scalar_dtypes,
            "buffers": [_buffer_wire(b) for b in self.buffers],
            "grid": list(self.grid), "block": list(self.block), "shared_bytes": self.shared_bytes,
            "rtol": self.rtol, "atol": self.atol,
            # only then: the wire (and the workspace's hash) of a kernel without structs is unchanged
            **({"structs": {k: [v.hex(), a] for k, (v, a) in self.structs.items()}} if self.structs else {}),
        }


def _buffer_wire(buffer: Buffer) -> dict[str, object]:
    wire: dict[str, object] = {"name": buffer.name, "dtype": buffer.dtype, "count": buffer.count, "role": buffer.role}
    init = buffer.init
    wire["init"] = None if init is None else [init.kind, list(init.params)]
    if init is not None and init.kind == "file":
        wire["init"] = [init.kind, [], init.path, _stamp(init.path)]
    if buffer.expect is not None:  # only then: the wire (and the workspace's hash) of other specs is unchanged
        wire["expect"] = [buffer.expect, _stamp(buffer.expect)]
    return wire


def _stamp(path: str | None) -> list[int]:
    """Size and modification time of a data file, so that a changed file is a new workspace."""
    try:
        stat = Path(path or "").stat()
    except OSError:
        return [0, 0]
    return [int(stat.st_size), int(stat.st_mtime_ns)]


def data_file(spec_file: str | None, written: str) -> Path:
    """A `file(...)` path as the spec writes it, relative to the spec's folder."""
    path = Path(written)
    if path.is_absolute() or spec_file is None:
        return path
    return Path(spec_file).resolve().parent / path


def _checked_file(init: InitSpec, kernel: KernelSpec, count: int, dtype: str, key: str) -> str:
    assert init.path is not None
    path = data_file(kernel.file, init.path)
    try:
        check_npy(path, count, dtype)
    except NpyError as error:
        raise InputError(f"file({init.path}): {error}", file=kernel.file, key=key) from None
    return str(path)


def uses_files(kernel: KernelSpec) -> bool:
    """Whether a buffer of `kernel` is read from a file (its sizes are then the file's, fixed)."""
    return any((a.init is not None and a.init.kind == "file") or a.expect is not None for a in kernel.args)


def _cast(value: Number, dtype: str, key: str, file: str | None) -> Number:
    kind = np.dtype(dtype).kind
    if kind == "f":
        if abs(value) > float(np.finfo(np.dtype(dtype)).max):
            raise InputError(f"value {value} does not fit in {dtype}", file=file, key=key)
        return float(value)
    if isinstance(value, float):
        if not value.is_integer():
            raise InputError(f"value {value} is not an integer", file=file, key=key)
        value = int(value)
    if kind == "b":
        return int(bool(value))
    info = np.iinfo(np.dtype(dtype))
    if not info.min <= value <= info.max:
        raise InputError(f"value {value} does not fit in {dtype}", file=file, key=key)
    return value


def spec_launch(kernel: KernelSpec) -> LaunchConfig:
    """The spec's own launch configuration as expressions (a candidate's unless it asks for another)."""
    return LaunchConfig(tuple(str(g) for g in kernel.grid), tuple(str(b) for b in kernel.block),
                        str(kernel.shared_bytes))


def resolve(
    kernel: KernelSpec,
    *,
    overrides: dict[str, int] | None = None,
    launch: LaunchConfig | None = None,
) -> ResolvedKernel:
    """Evaluate `kernel` with its own values (or `overrides`) and its launch (or `launch`)."""
    file = kernel.file
    scalars: dict[str, Number] = {}
    dtypes: dict[str, str] = {}
    for i, arg in enumerate(kernel.args):
        if not arg.is_scalar:
            continue
        key = kernel.key(f".arg[{i}].value")
        if overrides and arg.name in overrides:
            value: Number = overrides[arg.name]
        else:
            assert arg.value is not None
            value = evaluate(arg.value, scalars, file=file, key=key)
        dtypes[arg.name] = arg.ctype.info.dtype
        scalars[arg.name] = _cast(value, arg.ctype.info.dtype, key, file)
    buffers = []
    for i, arg in enumerate(kernel.args):
        if not arg.is_pointer:
            continue
        key = kernel.key(f".arg[{i}].count")
        assert arg.count is not None and arg.role is not None
        count = evaluate_int(arg.count, scalars, file=file, key=key)
        if count <= 0:
            raise InputError(f"count {arg.count!r} is {count}; it must be positive", file=file, key=key)
        count *= arg.ctype.lanes  # a buffer of CUDA vectors is made and compared lane by lane
        if count * np.dtype(arg.ctype.info.dtype).itemsize > MAX_BUFFER_BYTES:
            raise InputError(f"count {arg.count!r} is {count}: {arg.name} would need more than 2^63 bytes",
                             file=file, key=key)
        init = None if arg.init is None else arg.init.evaluate(
            scalars, file=file, key=kernel.key(f".arg[{i}].init"))
        dtype = arg.ctype.info.dtype
        if init is not None and init.kind == "file" and arg.init is not None:
            init = Init("file", (), _checked_file(arg.init, kernel, count, dtype, kernel.key(f".arg[{i}].init")))
        expect = None if arg.expect is None else _checked_file(arg.expect, kernel, count, dtype,
                                                               kernel.key(f".arg[{i}].expect"))
        buffers.append(Buffer(arg.name, dtype, count, arg.role, init, expect))
    grid_exprs, block_exprs, shared_expr = kernel.grid, kernel.block, kernel.shared_bytes
    where = "kernel"
    if launch is not None:
        grid_exprs, block_exprs, shared_expr = launch.grid, launch.block, launch.shared_bytes
        where = "candidate launch"
    grid = _dims(grid_exprs, scalars, kernel, "grid", where)
    block = _dims(block_exprs, scalars, kernel, "block", where)
    shared_key = kernel.key(".shared_bytes") if launch is None else "launch.shared_bytes"
    shared = evaluate_int(shared_expr, scalars, file=file, key=shared_key)
    if shared < 0:
        raise InputError(f"{where}: shared_bytes is {shared}; it must not be negative", file=file, key=shared_key)
    if shared > MAX_SHARED_BYTES_PER_BLOCK:
        raise InputError(f"{where}: shared_bytes is {shared}; no GPU gives a block more than "
                         f"{MAX_SHARED_BYTES_PER_BLOCK} bytes of dynamic shared memory", file=file, key=shared_key)
    block_key = kernel.key(".block") if launch is None else "launch.block"
    if block[0] * block[1] * block[2] > MAX_THREADS_PER_BLOCK:
        raise InputError(f"{where}: a block of {block} has more than {MAX_THREADS_PER_BLOCK} threads",
                         file=file, key=block_key)
    for i, (size, limit) in enumerate(zip(block, MAX_BLOCK_DIM, strict=True)):
        if size > limit:
            raise InputError(f"{where}: block[{i}] is {size}; CUDA allows at most {limit}", file=file,
                             key=f"{block_key}[{i}]")
    return ResolvedKernel(
        name=kernel.name, scalars=scalars,
        args=tuple((a.name, "buffer" if a.is_pointer else "bytes" if a.is_struct else "scalar") for a in kernel.args),
        structs={a.name: (a.raw, a.align) for a in kernel.args if a.is_struct and a.raw is not None},
        scalar_dtypes=dtypes, buffers=tuple(buffers), grid=grid, block=block, shared_bytes=shared,
        rtol=kernel.rtol, atol=kernel.atol,
        flops=None if kernel.flops is None else float(
            evaluate(kernel.flops, scalars, file=file, key=kernel.key(".flops"))),
    )


def _dims(exprs: tuple[str | int | float, ...], scalars: dict[str, Number], kernel: KernelSpec,
          what: str, where: str) -> tuple[int, int, int]:
    if not 1 <= len(exprs) <= 3:
        key = kernel.key(f".{what}") if where == "kernel" else f"launch.{what}"
        raise InputError(f"{where}: {what} needs 1 to 3 expressions", file=kernel.file, key=key)
    values = []
    for i, expr in enumerate(exprs):
        key = kernel.key(f".{what}[{i}]") if where == "kernel" else f"launch.{what}[{i}]"
        value = evaluate_int(expr, scalars, file=kernel.file, key=key)
        if not 1 <= value <= MAX_DIM[i]:
            raise InputError(f"{what}[{i}] = {expr!r} is {value}, outside 1..{MAX_DIM[i]}", file=kernel.file, key=key)
        values.append(value)
    values += [1] * (3 - len(values))
    return (values[0], values[1], values[2])


def size_scalar(kernel: KernelSpec) -> str | None:
    """The leading problem-size scalar: the first integer scalar that a buffer count mentions."""
    mentioned: list[str] = []
    for arg in kernel.args:
        if arg.is_pointer:
            mentioned += sorted(names_in(arg.count if arg.count is not None else ""))
    for arg in kernel.args:
        if arg.is_scalar and arg.ctype.info.integer and arg.ctype.base != "bool" and arg.name in mentioned:
            return arg.name
    return None


def odd_size_variant(kernel: KernelSpec, base: ResolvedKernel, *, cap: int = 1 << 20) -> dict[str, int] | None:
    """Overrides for a smaller size of the leading scalar that is not a multiple of the block
    size (so tail handling is exercised), or None when the spec's sizes do not allow one."""
    name = size_scalar(kernel)
    if name is None or uses_files(kernel):  # captured data has the one size it was captured at
        return None
    value = int(base.scalars[name])
    block = base.block[0]
    candidate = min(value - 1, max(cap, 2 * block) + 1, value // 2 * 2 + 1)
    while candidate > 1 and (candidate % block == 0 or candidate % 2 == 0 and block % 2 == 0):
        candidate -= 1
    if candidate < 1 or candidate == value:
        return None
    overrides = {name: candidate}
    try:
        resolved = resolve(kernel, overrides=overrides)
    except InputError:
        return None
    if any(b.count <= 0 for b in resolved.buffers):
        return None
    return overrides
