"""A numpy stand-in for the slice of pycuda.driver the GPU worker uses, so that the worker's
session, restore, on-device comparison and timing logic runs on a machine without a GPU.

Device memory is one flat address space of numpy byte arrays; kernels are Python callables
registered by "cubin" bytes. The comparison kernels are re-implemented here from their CUDA
source's contract (counts added, ~first recorded with a max), so a wrong argument order or
offset in the worker shows up as a wrong verdict.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from regrapht.validate.checker import fingerprint
from regrapht.validate.compare import summarize_output
from regrapht.validate.gpu_worker import Device

MASK64 = (1 << 64) - 1
Kernel = Callable[["FakeCuda", list[Any], dict[str, int]], None]


class FakeError(Exception):
    pass


class FakeAlloc:
    def __init__(self, cuda: FakeCuda, base: int, size: int) -> None:
        self.cuda, self.base, self.size = cuda, base, size

    def __int__(self) -> int:
        return self.base

    def free(self) -> None:
        self.cuda.memory.pop(self.base, None)


class FakeEvent:
    def record(self, stream: object = None) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def time_since(self, other: FakeEvent) -> float:
        return 0.1


class FakeFunction:
    def __init__(self, cuda: FakeCuda, body: Kernel, state: dict[str, int]) -> None:
        self.cuda, self.body, self.state = cuda, body, state

    def set_attribute(self, attribute: object, value: int) -> None:
        pass

    def __call__(self, *args: Any, block: tuple[int, ...], grid: tuple[int, ...], shared: int = 0) -> None:
        assert len(block) == 3 and 1 <= len(grid) <= 3 and all(int(g) > 0 for g in grid), (block, grid)
        for arg in args:
            assert isinstance(arg, np.generic), f"kernel arguments must be numpy scalars, got {type(arg)}"
        self.cuda.launches += 1
        self.body(self.cuda, list(args), self.state)


class FakeModule:
    def __init__(self, cuda: FakeCuda, kernels: dict[str, Kernel]) -> None:
        self.cuda, self.kernels = cuda, kernels
        self.state: dict[str, int] = {}  # __device__ variables: per loaded module

    def get_function(self, name: str) -> FakeFunction:
        # a candidate module registers its one kernel under "*" (its mangled name varies)
        return FakeFunction(self.cuda, self.kernels.get(name) or self.kernels["*"], self.state)


class FakeCuda:
    Error = FakeError

    class function_attribute:  # noqa: N801 - mirrors pycuda's name
        MAX_DYNAMIC_SHARED_SIZE_BYTES = 8

    def __init__(self) -> None:
        self.memory: dict[int, np.ndarray] = {}
        self._next = itertools.count(1 << 20, 1 << 40)
        self.modules: dict[bytes, dict[str, Kernel]] = {b"checker": CHECKER}
        self.launches = 0

    # memory
    def mem_alloc(self, size: int) -> FakeAlloc:
        assert size > 0
        base = next(self._next)
        self.memory[base] = np.full(size, 0x5A, dtype=np.uint8)  # garbage, like fresh device memory
        return FakeAlloc(self, base, size)

    def view(self, pointer: int | FakeAlloc, size: int) -> np.ndarray:
        pointer = int(pointer)
        for base, data in self.memory.items():
            if base <= pointer and pointer + size <= base + data.size:
                return data[pointer - base:pointer - base + size]
        raise FakeError(f"illegal address {pointer:#x} (+{size})")

    def first_alloc_of(self, size: int) -> np.ndarray:
        """The oldest live allocation of exactly `size` bytes (a stray write's target in tests)."""
        return next(data for data in self.memory.values() if data.size == size)

    def memset_d8(self, dest: int | FakeAlloc, value: int, count: int) -> None:
        self.view(dest, count)[:] = value

    def memcpy_dtod(self, dest: int | FakeAlloc, src: int | FakeAlloc, size: int) -> None:
        self.view(dest, size)[:] = self.view(src, size)

    def memcpy_htod(self, dest: int | FakeAlloc, array: np.ndarray) -> None:
        self.view(dest, array.nbytes)[:] = np.ascontiguousarray(array).view(np.uint8).ravel()

    def memcpy_dtoh(self, array: np.ndarray, src: int | FakeAlloc) -> None:
        array.view(np.uint8).ravel()[:] = self.view(src, array.nbytes)

    def array(self, pointer: int | FakeAlloc, count: int, dtype: Any) -> np.ndarray:
        dt = np.dtype(dtype)
        return self.view(pointer, count * dt.itemsize).view(dt)

    def Event(self) -> FakeEvent:  # noqa: N802 - mirrors pycuda's name
        return FakeEvent()

    def module_from_buffer(self, cubin: bytes) -> FakeModule:
        return FakeModule(self, self.modules[bytes(cubin)])


class FakeContext:
    def synchronize(self) -> None:
        pass

    def pop(self) -> None:
        pass


def fake_device(cuda: FakeCuda, budget: int = 1 << 30) -> Device:
    """A worker `Device` over `cuda`, without pycuda (Device.__init__ would import it)."""
    dev = Device.__new__(Device)
    dev.cuda = cuda
    dev.clock = itertools.count(0.0, 0.001).__next__  # type: ignore[assignment]
    dev.context = FakeContext()
    dev.name, dev.cc, dev.l2_bytes, dev.sms, dev.total_bytes = "Fake GPU", [9, 0], 1 << 16, 4, 1 << 34
    dev.flush_size = 1 << 17
    dev.flush_buffer = cuda.mem_alloc(dev.flush_size)
    dev.workspace_budget = budget
    dev.workspaces = OrderedDict()
    dev.checkers = {}
    dev.host_inputs = {}
    return dev


# -- the comparison kernels, per their CUDA contract --------------------------------------------
def _report(cuda: FakeCuda, res: int, count: int, first: int) -> None:
    words = cuda.array(res, 2, np.uint64)
    if count:
        words[0] += np.uint64(count)
        words[1] = max(int(words[1]), (~first) & MASK64)


def _ne(width: int) -> Kernel:
    def body(cuda: FakeCuda, args: list[Any], _state: dict[str, int]) -> None:
        a, b, n, res = (int(x) for x in args)
        dt = np.dtype(f"u{width}")
        hits = np.flatnonzero(cuda.array(a, n, dt) != cuda.array(b, n, dt))
        _report(cuda, res, hits.size, int(hits[0]) if hits.size else 0)
    return body


def _ne_fill(cuda: FakeCuda, args: list[Any], _state: dict[str, int]) -> None:
    assert isinstance(args[1], np.uint32) and isinstance(args[2], np.uint64)
    a, value, n, res = (int(x) for x in args)
    hits = np.flatnonzero(cuda.array(a, n, np.uint8) != value)
    _report(cuda, res, hits.size, int(hits[0]) if hits.size else 0)


def _cmp(dtype: str) -> Kernel:
    def body(cuda: FakeCuda, args: list[Any], _state: dict[str, int]) -> None:
        assert isinstance(args[3], np.float64) and isinstance(args[4], np.float64)
        ref, got, n = int(args[0]), int(args[1]), int(args[2])
        atol, rtol, res = float(args[3]), float(args[4]), int(args[5])
        summary = summarize_output(cuda.array(ref, n, dtype), cuda.array(got, n, dtype), rtol=rtol, atol=atol)
        _report(cuda, res, summary.nonfinite_count, max(summary.nonfinite_first, 0))
        _report(cuda, res + 16, summary.bad_count, max(summary.bad_first, 0))
    return body


def _hash(cuda: FakeCuda, args: list[Any], _state: dict[str, int]) -> None:
    assert isinstance(args[1], np.uint64)
    a, n, res = (int(x) for x in args)
    word = cuda.array(res, 1, np.uint64)
    word[0] = np.uint64((int(word[0]) + fingerprint(cuda.view(a, n).tobytes())) & MASK64)


CHECKER: dict[str, Kernel] = {
    "rg_ne_fill_u8": _ne_fill, "rg_ne_u8": _ne(1), "rg_ne_u16": _ne(2), "rg_ne_u32": _ne(4), "rg_ne_u64": _ne(8),
    "rg_cmp_f16": _cmp("float16"), "rg_cmp_f32": _cmp("float32"), "rg_cmp_f64": _cmp("float64"),
    "rg_hash_u8": _hash,
}
