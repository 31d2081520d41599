"""Drawing buffer data for an evaluated initialiser: `generate(init, count, dtype, rng)`.

The numpy side of `regrapht.spec.init`, kept apart so that reading a spec (the language server,
`regrapht analyze`) never imports numpy; the GPU worker and the reference checks draw here.
Also owns reading `file(PATH.npy)` data (`npy_layout` reads only the header, `read_npy` the
elements, both refusing a file whose dtype or element count is not the buffer's).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from regrapht.spec.init import Init


class NpyError(ValueError):
    """A .npy file that cannot stand for a buffer: unreadable, not .npy, wrong dtype or size."""


def npy_layout(path: Path) -> tuple[np.dtype, int]:
    """The dtype and element count of a .npy file, from its header alone."""
    if path.exists() and not path.is_file():  # a FIFO or a device would block or never end
        raise NpyError(f"{path} is not a regular file")
    try:
        with path.open("rb") as handle:
            version = np.lib.format.read_magic(handle)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
            else:
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
    except OSError as error:
        raise NpyError(f"cannot read {path}: {error.strerror or error}") from error
    except ValueError as error:
        raise NpyError(f"{path} is not a .npy file ({error})") from error
    if dtype.hasobject:
        raise NpyError(f"{path} holds Python objects, not numbers")
    count = 1
    for size in shape:
        count *= int(size)
    return np.dtype(dtype), count


def check_npy(path: Path, count: int, dtype: str) -> None:
    """NpyError unless `path` holds exactly `count` elements of `dtype`."""
    found, elements = npy_layout(path)
    if found.newbyteorder("=") != np.dtype(dtype) or found.byteorder == ">":
        raise NpyError(f"{path.name} holds {found} elements, the buffer is {dtype}")
    if elements != count:
        raise NpyError(f"{path.name} holds {elements} elements, the buffer's count is {count}")


def read_npy(path: Path, count: int, dtype: str) -> np.ndarray:
    """The elements of `path` as a flat array of `dtype` (checked against `count` first)."""
    check_npy(path, count, dtype)
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise NpyError(f"cannot read {path}: {error}") from error
    return np.ascontiguousarray(array.reshape(-1), dtype=np.dtype(dtype))


def generate(init: Init, count: int, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """`count` elements of `dtype` drawn per `init` (random kinds consume `rng`)."""
    target = np.dtype(dtype)
    integer = target.kind in "iub"
    if init.kind == "file":
        assert init.path is not None
        return read_npy(Path(init.path), count, dtype)
    if init.kind == "zeros":
        return np.zeros(count, dtype=target)
    if init.kind == "ones":
        return np.ones(count, dtype=target)
    if init.kind == "const":
        return np.full(count, init.params[0]).astype(target)
    if init.kind == "arange":
        return (init.params[0] + init.params[1] * np.arange(count, dtype=np.float64)).astype(target)
    if target.kind == "b":
        return rng.random(count) < 0.5
    lo, hi = init.params
    if init.kind == "randint" or (init.kind == "uniform" and integer):
        return rng.integers(int(lo), int(hi), size=count, dtype=np.int64).astype(target)
    if init.kind == "uniform":
        return rng.uniform(lo, hi, size=count).astype(target)
    values = rng.normal(lo, hi, size=count)
    return (np.round(values) if integer else values).astype(target)
