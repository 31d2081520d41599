"""The GPU worker process (`python -m regrapht.validate.gpu_worker`): pycuda lives only here.

Owns everything that touches the device. Work is organised in workspaces (one original kernel
+ spec + a random base seed, chosen by the evaluator): a workspace keeps, on the device, each
seed's inputs (pristine copies, generated once on the host), the original's outputs for each
seed (the original runs once per seed per workspace), guarded working buffers (0xA5 canaries
before and after each buffer; init-less outputs poisoned with 0xFF) and the comparison kernels
(checker.py, compiled by the parent). Checking a candidate restores the working buffers with
device-to-device copies, runs it, and compares on the GPU: guards intact, inputs unchanged,
outputs equal within tolerance; only counts and first indices come back, plus the two
elements of the first mismatch for the reason. A candidate can write past its guards into
other allocations, so after every check and timing the worker audits the cached pristine
inputs and reference outputs of every workspace against fingerprints taken when they were made:
a changed set is dropped (made again when next needed) and the candidate judged wrong; on the
H200 one such write had made every later candidate of a search fail on one seed. Timing uses
CUDA events (warm-up, L2 flushed by writing a 2x-L2 buffer before every run, at least min_runs
and about target_ms of wall time).
A buffer with an `expect` file (a captured launch's output, docs/capture.md) is also compared
with it: the original's output when the reference is made (a spec that does not reproduce its
capture is "original_failed"), and every candidate's output after the usual comparison.
Workspaces are evicted least-recently-used past a device-memory budget. Requests and replies are
the dataclasses of worker_protocol.py, as msgpack frames on stdin/stdout (worker.py is the
parent side). Imports stay light (numpy, msgpack, pycuda, the package's pure modules): this runs
on the GPU host under its own Python. A CUDA error that poisons the
context is answered with status "fatal" and the process exits; the parent starts a fresh one.
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import msgpack
import numpy as np

from regrapht.spec.draw import NpyError, generate, read_npy
from regrapht.spec.init import Init
from regrapht.validate.checker import (
    CHECK_ENTRIES,
    FLOAT_COMPARES,
    SLOTS_PER_BUFFER,
    THREADS,
    blocks_for,
    decode_first,
)
from regrapht.validate.compare import (
    GUARD_BYTE,
    POISON_BYTE,
    OutputSummary,
    describe_output,
    guard_reason,
    input_reason,
)
from regrapht.validate.worker_protocol import (
    Check,
    CheckVerdict,
    DeviceInfo,
    Exit,
    Failed,
    Hello,
    HelloReply,
    InputPlan,
    ModuleRef,
    Peaks,
    PeaksReply,
    Prepare,
    Prepared,
    Reply,
    Request,
    Time,
    Timed,
    UnknownRequest,
    WorkspacePlan,
    reply_to_wire,
    request_from_wire,
)

GUARD_BYTES = 16 * 1024
WORKSPACE_MEMORY_SHARE = 0.5  # of the device memory free at start-up, for all workspaces together
TIMING_BATCH = 10  # timed runs queued between host synchronisations
_HEADER = struct.Struct(">I")


class Fatal(Exception):
    """A device error after which the context cannot be trusted."""


class Device:
    """The CUDA context and helpers; constructed only when pycuda and a device are present."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        import pycuda.driver as cuda

        self.cuda = cuda
        self.clock = clock
        cuda.init()
        if cuda.Device.count() == 0:
            raise RuntimeError("no CUDA device present")
        self.device = cuda.Device(0)
        self.context = self.device.make_context()
        attrs = cuda.device_attribute
        self.name = self.device.name()
        self.cc = list(self.device.compute_capability())
        self.l2_bytes = int(self.device.get_attribute(attrs.L2_CACHE_SIZE))
        self.sms = int(self.device.get_attribute(attrs.MULTIPROCESSOR_COUNT))
        # Launch limits the deterministic appliers size grids and shared arrays by.
        self.limits = {"max_threads_per_sm": int(self.device.get_attribute(attrs.MAX_THREADS_PER_MULTIPROCESSOR)),
                       "max_threads_per_block": int(self.device.get_attribute(attrs.MAX_THREADS_PER_BLOCK)),
                       "max_shared_per_block": int(self.device.get_attribute(attrs.MAX_SHARED_MEMORY_PER_BLOCK))}
        self.total_bytes = int(self.device.total_memory())
        self.flush_size = max(2 * self.l2_bytes, 1 << 20)
        self.flush_buffer = cuda.mem_alloc(self.flush_size)
        free, _total = cuda.mem_get_info()
        self.workspace_budget = int(free * WORKSPACE_MEMORY_SHARE)
        self.workspaces: OrderedDict[str, KernelWorkspace] = OrderedDict()
        self.checkers: dict[str, Checker] = {}
        self.host_inputs: dict[tuple[str, str], dict[str, np.ndarray]] = {}

    def info(self) -> DeviceInfo:
        return DeviceInfo(self.name, (int(self.cc[0]), int(self.cc[1])), self.l2_bytes, self.sms, self.total_bytes,
                          int(self.cuda.get_driver_version()), self.limits["max_threads_per_sm"],
                          self.limits["max_threads_per_block"], self.limits["max_shared_per_block"])

    def close(self) -> None:
        for workspace in self.workspaces.values():
            workspace.free()
        self.workspaces.clear()
        self.context.pop()

    def load(self, module: ModuleRef) -> Any:
        mod = self.cuda.module_from_buffer(module.cubin)
        return mod, mod.get_function(module.entry)

    def flush_l2(self, value: int) -> None:
        self.cuda.memset_d8(self.flush_buffer, value & 0xFF, self.flush_size)

    def alloc(self, nbytes: int) -> Any:
        return self.cuda.mem_alloc(max(int(nbytes), 1))  # a zero-byte allocation is an error

    def checker(self, cubin: bytes) -> Checker:
        key = hashlib.sha256(cubin).hexdigest()
        if key not in self.checkers:
            module = self.cuda.module_from_buffer(cubin)
            self.checkers[key] = Checker(module, {name: module.get_function(name) for name in CHECK_ENTRIES})
        return self.checkers[key]

    def workspace(self, plan: WorkspacePlan) -> tuple[KernelWorkspace, bool]:
        """The workspace `plan` describes, made (without inputs yet) if this worker has not seen it."""
        found = self.workspaces.get(plan.id)
        if found is not None:
            self.workspaces.move_to_end(plan.id)
            return found, False
        mod, fn = self.load(plan.original)
        workspace = KernelWorkspace(plan.id, mod, fn, self.checker(plan.checker_cubin), {i.key: i for i in plan.inputs})
        self.workspaces[plan.id] = workspace
        return workspace, True

    def make_room(self, keep: KernelWorkspace, nbytes: int) -> None:
        """Evict least recently used workspaces (never `keep`) until `nbytes` more fit the budget."""
        def used() -> int:
            return sum(w.nbytes for w in self.workspaces.values())
        for key in list(self.workspaces):
            if used() + nbytes <= self.workspace_budget:
                return
            if key != keep.id:
                self.workspaces.pop(key).free()


@dataclass
class Checker:
    """The loaded comparison kernels (checker.CHECK_KERNELS)."""

    module: Any
    functions: dict[str, Any]


def nbytes_of(buf: dict[str, Any]) -> int:
    return int(buf["count"]) * np.dtype(buf["dtype"]).itemsize


def layout_of(kernel: dict[str, Any]) -> tuple[tuple[str, str, int], ...]:
    return tuple((b["name"], b["dtype"], int(b["count"])) for b in kernel["buffers"])


@dataclass
class InputSet:
    """One seed at one size: pristine device copies of the initialised buffers and, once the
    original has run on them, its outputs."""

    kernel: dict[str, Any]
    seed: int
    pristine: dict[str, Any]
    reference: dict[str, Any] = field(default_factory=dict)
    expected: dict[str, Any] = field(default_factory=dict)  # captured outputs (`expect` files)
    nbytes: int = 0
    fingerprints: dict[str, int] = field(default_factory=dict)  # cached buffer label -> fingerprint

    def cached(self, *, pristine: bool = True) -> list[tuple[str, int, int]]:
        """(label, device pointer, bytes) of every buffer this set keeps between requests (the
        reference outputs only, without `pristine`)."""
        sizes = {b["name"]: nbytes_of(b) for b in self.kernel["buffers"]}
        inputs = [(f"input {name}", int(a), sizes[name]) for name, a in self.pristine.items()] if pristine else []
        inputs += [(f"captured output {name}", int(a), sizes[name]) for name, a in self.expected.items()] \
            if pristine else []
        return inputs + [(f"reference {name}", int(a), sizes[name]) for name, a in self.reference.items()]

    def free(self) -> None:
        for alloc in (*self.pristine.values(), *self.reference.values(), *self.expected.values()):
            alloc.free()
        self.pristine.clear()
        self.reference.clear()
        self.expected.clear()


class Working:
    """Device buffers of one layout, each between two guard regions; restored before every run."""

    def __init__(self, dev: Device, kernel: dict[str, Any]) -> None:
        self.dev = dev
        self.buffers = list(kernel["buffers"])
        self.allocs: dict[str, Any] = {}
        self.ptrs: dict[str, int] = {}
        self.nbytes = 0
        for buf in self.buffers:
            size = nbytes_of(buf) + 2 * GUARD_BYTES
            alloc = dev.alloc(size)
            self.allocs[buf["name"]] = alloc
            self.ptrs[buf["name"]] = int(alloc) + GUARD_BYTES
            self.nbytes += size
        # one zeroed results area for the comparison kernels, SLOTS_PER_BUFFER words per buffer
        self.results_words = SLOTS_PER_BUFFER * max(1, len(self.buffers))
        self.results = dev.alloc(8 * self.results_words)

    def restore(self, inputs: InputSet) -> None:
        """Guards re-armed, initialised buffers copied from the pristine ones, the rest poisoned."""
        cuda = self.dev.cuda
        for buf in self.buffers:
            name, size = buf["name"], nbytes_of(buf)
            cuda.memset_d8(int(self.allocs[name]), GUARD_BYTE, GUARD_BYTES)
            cuda.memset_d8(self.ptrs[name] + size, GUARD_BYTE, GUARD_BYTES)
            if size == 0:
                continue
            if name in inputs.pristine:
                cuda.memcpy_dtod(self.ptrs[name], inputs.pristine[name], size)
            else:
                cuda.memset_d8(self.ptrs[name], POISON_BYTE, size)

    def args(self, kernel: dict[str, Any]) -> list[Any]:
        values: list[Any] = []
        for name, kind in kernel["args"]:
            if kind == "buffer":
                values.append(np.uintp(self.ptrs[name]))
            elif kind == "bytes":
                values.append(None)  # a struct: packed below
            else:
                values.append(np.dtype(kernel["scalar_dtypes"][name]).type(kernel["scalars"][name]))
        if not kernel.get("structs"):
            return values
        return [packed_parameters(kernel, values)]

    def read_element(self, pointer: int, index: int, dtype: str) -> np.ndarray:
        out = np.empty(1, dtype=np.dtype(dtype))
        self.dev.cuda.memcpy_dtoh(out, int(pointer) + index * out.itemsize)
        return out

    def free(self) -> None:
        for alloc in self.allocs.values():
            alloc.free()
        self.allocs.clear()
        self.results.free()


def packed_parameters(kernel: dict[str, Any], values: list[Any]) -> np.void:
    """The whole parameter buffer of a kernel with a struct passed by value, laid out as the compiler
    does (each parameter at the next multiple of its alignment: a scalar's or pointer's size, a
    struct's `align`), as one value: pycuda packs a np.void as its bytes, without padding."""
    buffer = bytearray()
    for (name, kind), value in zip(kernel["args"], values, strict=True):
        if kind == "bytes":
            hexed, align = kernel["structs"][name]
            data = bytes.fromhex(str(hexed))
        else:
            data = value.tobytes()
            align = len(data)
        buffer += b"\0" * (-len(buffer) % int(align))
        buffer += data
    return np.void(bytes(buffer))


@dataclass
class KernelWorkspace:
    """One original kernel + spec + seeds: its inputs, reference outputs and working buffers."""

    id: str
    original_module: Any
    original: Any
    checker: Checker
    plans: dict[str, InputPlan]  # input key -> the input set's plan
    inputs: dict[str, InputSet] = field(default_factory=dict)
    working: dict[tuple[tuple[str, str, int], ...], Working] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        return sum(i.nbytes for i in self.inputs.values()) + sum(w.nbytes for w in self.working.values())

    def free(self) -> None:
        for inputs in self.inputs.values():
            inputs.free()
        for working in self.working.values():
            working.free()
        self.inputs.clear()
        self.working.clear()


def make_inputs(kernel: dict[str, Any], seed: int) -> dict[str, np.ndarray]:
    """Host contents for every buffer that has an init, drawn from `seed` (or read from its file)."""
    rng = np.random.default_rng(seed)
    host = {}
    for buf in kernel["buffers"]:
        if buf["init"] is not None:
            kind, params = buf["init"][0], buf["init"][1]
            path = str(buf["init"][2]) if kind == "file" else None
            try:
                host[buf["name"]] = generate(Init(kind, tuple(params), path), int(buf["count"]), buf["dtype"], rng)
            except NpyError as error:
                raise Fatal(f"input {buf['name']}: {error}") from error
    return host


def make_expected(kernel: dict[str, Any]) -> dict[str, np.ndarray]:
    """The captured outputs (`expect` files) of the buffers that have one."""
    expected = {}
    for buf in kernel["buffers"]:
        if buf.get("expect"):
            try:
                expected[buf["name"]] = read_npy(Path(str(buf["expect"][0])), int(buf["count"]), buf["dtype"])
            except NpyError as error:
                raise Fatal(f"captured output of {buf['name']}: {error}") from error
    return expected


def input_set(dev: Device, workspace: KernelWorkspace, key: str) -> tuple[InputSet, Working]:
    """The pristine inputs of `key` (generated and uploaded once) and working buffers of its layout."""
    plan = workspace.plans[key]
    kernel = plan.kernel
    layout = layout_of(kernel)
    if layout not in workspace.working:
        dev.make_room(workspace, sum(nbytes_of(b) + 2 * GUARD_BYTES for b in kernel["buffers"]))
        workspace.working[layout] = Working(dev, kernel)
    if key not in workspace.inputs:
        host = dev.host_inputs.pop((workspace.id, key), None)
        if host is None:
            host = make_inputs(kernel, plan.seed)
        outputs = sum(nbytes_of(b) for b in kernel["buffers"] if b["role"] in ("out", "inout"))
        dev.make_room(workspace, sum(a.nbytes for a in host.values()) + outputs)
        captured = make_expected(kernel)
        dev.make_room(workspace, sum(a.nbytes for a in captured.values()))
        pristine: dict[str, Any] = {}
        expected: dict[str, Any] = {}
        for target, arrays in ((pristine, host), (expected, captured)):
            for name, array in arrays.items():
                target[name] = dev.alloc(array.nbytes)
                if array.nbytes:
                    dev.cuda.memcpy_htod(target[name], array)
        made = InputSet(kernel, plan.seed, pristine, expected=expected,
                        nbytes=sum(a.nbytes for a in (*host.values(), *captured.values())))
        made.fingerprints = fingerprints_of(dev, workspace.checker, made.cached())
        workspace.inputs[key] = made
    return workspace.inputs[key], workspace.working[layout]


def fingerprints_of(dev: Device, checker: Checker, buffers: list[tuple[str, int, int]]) -> dict[str, int]:
    """label -> on-device fingerprint (checker.rg_hash_u8) of each (label, pointer, bytes)."""
    if not buffers:
        return {}
    out = dev.alloc(8 * len(buffers))
    try:
        dev.cuda.memset_d8(out, 0, 8 * len(buffers))
        for k, (_label, pointer, size) in enumerate(buffers):
            if size:
                checker.functions["rg_hash_u8"](np.uintp(pointer), np.uint64(size), np.uintp(int(out) + 8 * k),
                                                block=(THREADS, 1, 1), grid=(blocks_for(size // 4 + 1, dev.sms), 1))
        values = np.empty(len(buffers), dtype=np.uint64)
        dev.cuda.memcpy_dtoh(values, out)  # synchronous: waits for the kernels above
    finally:
        out.free()
    return {label: int(value) for (label, _pointer, _size), value in zip(buffers, values, strict=True)}


def audit(dev: Device) -> str | None:
    """Re-fingerprint every workspace's cached inputs and references; drop the input sets whose
    buffers changed (they are made again when next needed). The first change's description, or
    None when all are intact. Run after candidate code ran. (An original that writes out of
    bounds would be blamed on the candidate checked with it; its baseline timing reports it too.)"""
    damage: list[str] = []
    for workspace in dev.workspaces.values():
        for key, inputs in list(workspace.inputs.items()):
            now = fingerprints_of(dev, workspace.checker, inputs.cached())
            changed = [label for label, value in now.items() if inputs.fingerprints.get(label) != value]
            if changed:
                damage.append(f"the cached {changed[0]} of {key}")
                workspace.inputs.pop(key).free()
    if not damage:
        return None
    return f"wrote outside its buffers, past the guard regions: {damage[0]} changed"


def launch(dev: Device, function: Any, kernel: dict[str, Any], working: Working) -> None:
    shared = int(kernel["shared_bytes"])
    if shared > 48 * 1024:
        function.set_attribute(dev.cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)
    function(*working.args(kernel), block=tuple(kernel["block"]), grid=tuple(kernel["grid"]), shared=shared)


def run_and_sync(dev: Device, function: Any, kernel: dict[str, Any], working: Working, who: str) -> None:
    try:
        launch(dev, function, kernel, working)
        dev.context.synchronize()
    except dev.cuda.Error as error:
        raise Fatal(f"{who}: {error}") from error


def reference_for(dev: Device, workspace: KernelWorkspace, inputs: InputSet, working: Working) -> str | None:
    """Run the original on `inputs` once and keep its outputs on the device; a reason if it fails."""
    if inputs.reference or not any(b["role"] in ("out", "inout") for b in inputs.kernel["buffers"]):
        return None
    working.restore(inputs)
    try:
        run_and_sync(dev, workspace.original, inputs.kernel, working, "original")
    except Fatal as error:
        return str(error)
    for buf in inputs.kernel["buffers"]:
        if buf["role"] in ("out", "inout"):
            size = nbytes_of(buf)
            inputs.reference[buf["name"]] = dev.alloc(size)
            inputs.nbytes += size
            if size:
                dev.cuda.memcpy_dtod(inputs.reference[buf["name"]], working.ptrs[buf["name"]], size)
    # the pristine inputs keep their fingerprints from the upload: damage done to them before
    # this reference was made is still found by the audit
    inputs.fingerprints |= fingerprints_of(dev, workspace.checker, inputs.cached(pristine=False))
    reason = against_captured(dev, workspace, inputs, working,
                              {name: int(alloc) for name, alloc in inputs.reference.items()})
    if reason is not None:
        return (f"the original does not reproduce the captured output ({reason}): the spec lacks state the "
                "program had (docs/capture.md)")
    return None


def against_captured(dev: Device, workspace: KernelWorkspace, inputs: InputSet, working: Working,
                     pointers: dict[str, int]) -> str | None:
    """Compare the outputs at `pointers` with the captured outputs (`expect` files), on the device;
    the first mismatch's reason, or None. Same tolerances and rule as the differential check."""
    kernel = inputs.kernel
    buffers = [b for b in kernel["buffers"] if b["name"] in inputs.expected and b["name"] in pointers]
    if not buffers:
        return None
    fns = workspace.checker.functions
    results = dev.alloc(32 * len(buffers))  # per buffer: (nonfinite count, ~first), (bad count, ~first)
    try:
        dev.cuda.memset_d8(results, 0, 32 * len(buffers))
        for j, buf in enumerate(buffers):
            name, dtype, count = buf["name"], np.dtype(buf["dtype"]), int(buf["count"])
            slots = int(results) + 32 * j
            grid = (blocks_for(count, dev.sms), 1)
            captured, got = np.uintp(int(inputs.expected[name])), np.uintp(pointers[name])
            if count == 0:
                continue
            if dtype.kind == "f":
                fns[FLOAT_COMPARES[dtype.itemsize]](
                    captured, got, np.uint64(count), np.float64(kernel["atol"]), np.float64(kernel["rtol"]),
                    np.uintp(slots), block=(THREADS, 1, 1), grid=grid)
            else:
                fns[_exact_kernel(dtype)](captured, got, np.uint64(count), np.uintp(slots + 16),
                                          block=(THREADS, 1, 1), grid=grid)
        summary = np.empty(4 * len(buffers), dtype=np.uint64)
        dev.cuda.memcpy_dtoh(summary, results)  # synchronous: waits for the kernels above
    finally:
        results.free()
    for j, buf in enumerate(buffers):
        words = [int(w) for w in summary[4 * j: 4 * j + 4]]
        result = OutputSummary(words[0], decode_first(words[0], words[1]), words[2], decode_first(words[2], words[3]))
        if result.ok:
            continue
        name = buf["name"]
        element = ElementReader(working, {"ref": int(inputs.expected[name]), "got": pointers[name]}, buf["dtype"])
        reason = describe_output(name, result, element, rtol=float(kernel["rtol"]), atol=float(kernel["atol"]))
        if reason:
            return reason.replace("the original has", "the capture has")
    return None


@dataclass(frozen=True)
class ElementReader:
    """Reads single elements of the original's ("ref") or the candidate's ("got") output."""

    working: Working
    pointers: dict[str, int]
    dtype: str

    def __call__(self, which: str, index: int) -> np.ndarray:
        return self.working.read_element(self.pointers[which], index, self.dtype)


def _exact_kernel(dtype: np.dtype) -> str:
    return {1: "rg_ne_u8", 2: "rg_ne_u16", 4: "rg_ne_u32", 8: "rg_ne_u64"}[dtype.itemsize]


def verify(dev: Device, workspace: KernelWorkspace, inputs: InputSet, working: Working) -> str | None:
    """Compare the working buffers after a candidate run with the pristine inputs and the
    original's outputs, on the device; None if all is well, else the first problem's reason
    (guards first, then inputs, then outputs, as the buffers are listed)."""
    cuda, fns = dev.cuda, workspace.checker.functions
    kernel = inputs.kernel
    cuda.memset_d8(working.results, 0, 8 * working.results_words)
    base = int(working.results)

    def run(name: str, n: int, *args: Any) -> None:
        if n > 0:
            fns[name](*args, block=(THREADS, 1, 1), grid=(blocks_for(n, dev.sms), 1))

    for j, buf in enumerate(kernel["buffers"]):
        name, size, dtype = buf["name"], nbytes_of(buf), np.dtype(buf["dtype"])
        slots = base + 8 * SLOTS_PER_BUFFER * j
        ptr = working.ptrs[name]
        run("rg_ne_fill_u8", GUARD_BYTES, np.uintp(ptr - GUARD_BYTES), np.uint32(GUARD_BYTE),
            np.uint64(GUARD_BYTES), np.uintp(slots))
        run("rg_ne_fill_u8", GUARD_BYTES, np.uintp(ptr + size), np.uint32(GUARD_BYTE), np.uint64(GUARD_BYTES),
            np.uintp(slots + 16))
        count = int(buf["count"])
        if buf["role"] == "in":
            if name in inputs.pristine:
                run(_exact_kernel(dtype), count, np.uintp(ptr), np.uintp(int(inputs.pristine[name])),
                    np.uint64(count), np.uintp(slots + 32))
            else:  # never initialised: it must still hold the poison (a byte index, see below)
                run("rg_ne_fill_u8", size, np.uintp(ptr), np.uint32(POISON_BYTE), np.uint64(size),
                    np.uintp(slots + 32))
        elif name in inputs.reference:
            ref = np.uintp(int(inputs.reference[name]))
            if dtype.kind == "f":
                run(FLOAT_COMPARES[dtype.itemsize], count, ref, np.uintp(ptr),
                    np.uint64(count), np.float64(kernel["atol"]), np.float64(kernel["rtol"]), np.uintp(slots + 32))
            else:
                run(_exact_kernel(dtype), count, ref, np.uintp(ptr), np.uint64(count), np.uintp(slots + 48))
    summary = np.empty(working.results_words, dtype=np.uint64)
    cuda.memcpy_dtoh(summary, working.results)  # synchronous: waits for the kernels above

    def pair(j: int, k: int) -> tuple[int, int]:
        count = int(summary[SLOTS_PER_BUFFER * j + 2 * k])
        return count, decode_first(count, int(summary[SLOTS_PER_BUFFER * j + 2 * k + 1]))

    buffers = list(enumerate(kernel["buffers"]))
    for j, buf in buffers:
        reason = guard_reason(buf["name"], pair(j, 0)[1], pair(j, 1)[1], GUARD_BYTES)
        if reason:
            return reason
    for j, buf in buffers:
        count, first = pair(j, 2)
        if buf["role"] == "in" and count:
            element = first if buf["name"] in inputs.pristine else first // np.dtype(buf["dtype"]).itemsize
            return input_reason(buf["name"], element)
    for j, buf in buffers:
        if buf["role"] == "in" or buf["name"] not in inputs.reference:
            continue
        (nf_count, nf_first), (bad_count, bad_first) = pair(j, 2), pair(j, 3)
        result = OutputSummary(nf_count, nf_first, bad_count, bad_first)
        if result.ok:
            continue
        name, dtype = buf["name"], buf["dtype"]
        element = ElementReader(working, {"ref": int(inputs.reference[name]), "got": working.ptrs[name]}, dtype)
        reason = describe_output(name, result, element, rtol=float(kernel["rtol"]), atol=float(kernel["atol"]))
        if reason:
            return reason
    if (captured := against_captured(dev, workspace, inputs, working, dict(working.ptrs))) is not None:
        return f"differs from the captured output: {captured}"
    return None


def prepare(dev: Device, request: Prepare) -> Prepared:
    """Generate on the host the inputs a workspace has not uploaded yet; touches no device.

    The evaluator sends this before taking the GPU lock, so drawing large random inputs (CPU
    work, seconds for big specs) does not keep other processes from the GPU.
    """
    plan = request.workspace
    known = dev.workspaces.get(plan.id)
    for stale in [k for k in dev.host_inputs if k[0] != plan.id]:  # bound host memory: one workspace
        del dev.host_inputs[stale]
    generated = 0
    for spec in plan.inputs:
        key = (plan.id, spec.key)
        if (known is not None and spec.key in known.inputs) or key in dev.host_inputs:
            continue
        dev.host_inputs[key] = make_inputs(spec.kernel, spec.seed)
        generated += 1
    return Prepared(generated)


def check(dev: Device, request: Check) -> CheckVerdict:
    workspace, created = dev.workspace(request.workspace)
    # the module stays loaded (referenced here) for the whole check: __device__ state persists
    # across the trials, which is what catches candidates that cache results between calls
    candidate_mod, candidate_fn = dev.load(request.candidate)
    references = 0
    for trial in request.trials:
        label = trial.label
        inputs, working = input_set(dev, workspace, trial.input)
        had_reference = bool(inputs.reference)
        if (failure := reference_for(dev, workspace, inputs, working)) is not None:
            return CheckVerdict("original_failed", f"{failure} ({label})")
        references += int(bool(inputs.reference) and not had_reference)
        for run in range(trial.candidate_runs):
            working.restore(inputs)
            run_and_sync(dev, candidate_fn, trial.candidate, working, "candidate")
            if reason := verify(dev, workspace, inputs, working):
                where = f" ({label}, run {run + 1})" if run else f" ({label})"
                # a damaged cached set explains the mismatch better than the mismatch itself
                return CheckVerdict("wrong", audit(dev) or reason + where)
    # One audit per check, after the candidate's last run (and on the early return above).
    if damage := audit(dev):
        return CheckVerdict("wrong", damage)
    del candidate_mod  # referenced until here on purpose (see above)
    return CheckVerdict("ok", trials=len(request.trials), workspace_created=created, references_run=references,
                        workspaces=len(dev.workspaces))


def time_kernel(dev: Device, request: Time) -> Timed:
    workspace, _created = dev.workspace(request.workspace)
    _module, function = dev.load(request.module)
    kernel = request.kernel
    inputs, working = input_set(dev, workspace, request.input)
    cuda = dev.cuda
    min_runs, max_runs = request.min_runs, max(request.max_runs, request.min_runs)
    events = [(cuda.Event(), cuda.Event()) for _ in range(TIMING_BATCH)]

    def batch(count: int, first: int) -> list[float]:
        # restore + L2 flush happen outside the events; one host synchronisation per batch
        for k in range(count):
            start, end = events[k]
            working.restore(inputs)
            dev.flush_l2(first + k)
            start.record()
            launch(dev, function, kernel, working)
            end.record()
        events[count - 1][1].synchronize()
        return [float(events[k][1].time_since(events[k][0])) for k in range(count)]

    # A candidate whose first batch is already far slower than the original (`slow_ms`) cannot
    # win: one batch tells enough, and a 100x slower kernel would otherwise hold the GPU for long.
    slow_ms = request.slow_ms
    times: list[float] = []
    try:
        batch(max(1, min(request.warmup, TIMING_BATCH)), 0)
        started = dev.clock()
        target_s = request.target_ms / 1e3
        while len(times) < max_runs and (len(times) < min_runs or dev.clock() - started < target_s):
            times += batch(min(TIMING_BATCH, max_runs - len(times)), len(times))
            if slow_ms is not None and sorted(times)[len(times) // 2] > slow_ms:
                break
    except cuda.Error as error:
        raise Fatal(f"timing: {error}") from error
    if damage := audit(dev):
        return Timed("wrong", reason=f"{damage} (while timed)")
    return Timed("ok", tuple(times))


PEAK_KERNEL = r"""
extern "C" __global__ void fma_peak(float *out, int iters, float seed)
{
    float a = seed + threadIdx.x, b = seed * 0.5f + blockIdx.x, c = 1.0001f, d = 0.9999f;
    float e = a * 0.25f, f = b * 0.75f, g = a + b, h = a - b;
    for (int i = 0; i < iters; i++) {
        a = fmaf(a, c, d); b = fmaf(b, c, d); e = fmaf(e, c, d); f = fmaf(f, c, d);
        g = fmaf(g, d, c); h = fmaf(h, d, c); c = fmaf(c, d, 1e-7f); d = fmaf(d, c, -1e-7f);
    }
    if (a + b + e + f + g + h + c + d == 0.123f) out[0] = a;
}
"""
PEAK_FLOPS_PER_ITER = 8 * 2  # eight FMAs per iteration, two flops each


def peaks(dev: Device, request: Peaks) -> PeaksReply:
    cuda = dev.cuda
    size = min(1 << 30, dev.total_bytes // 8)
    src, dst = cuda.mem_alloc(size), cuda.mem_alloc(size)
    start, end = cuda.Event(), cuda.Event()
    try:
        cuda.memset_d8(src, 1, size)
        copies = []
        for _ in range(12):
            start.record()
            cuda.memcpy_dtod(dst, src, size)
            end.record()
            end.synchronize()
            copies.append(end.time_since(start))
        copy_ms = float(np.median(copies[2:]))
    finally:
        src.free()
        dst.free()
    _module, function = dev.load(request.fma)
    out = cuda.mem_alloc(4)
    blocks, threads, iters = dev.sms * 8, 256, 1 << 14
    rates = []
    try:
        for _ in range(6):
            start.record()
            function(np.uintp(int(out)), np.int32(iters), np.float32(1.5), block=(threads, 1, 1), grid=(blocks, 1))
            end.record()
            end.synchronize()
            rates.append(blocks * threads * iters * PEAK_FLOPS_PER_ITER / (end.time_since(start) * 1e-3) / 1e9)
    finally:
        out.free()
    return PeaksReply(2 * size / (copy_ms * 1e-3) / 1e9, float(max(rates[1:])), dev.info())


def handle(device: Device | None, reason: str, request: Request) -> Reply:
    """The reply to one request (Fatal and CUDA errors propagate to `serve`)."""
    if isinstance(request, Hello):
        return HelloReply(device.info() if device else None, reason, os.getpid())
    if device is None:
        return Failed("no_device", reason or "no CUDA device present")
    if isinstance(request, Prepare):
        return prepare(device, request)
    if isinstance(request, Check):
        return check(device, request)
    if isinstance(request, Time):
        return time_kernel(device, request)
    if isinstance(request, Peaks):
        return peaks(device, request)
    return Failed("error", f"cannot handle {request.op!r}")


def serve(read: BinaryIO, write: BinaryIO, make_device: Callable[[], Device]) -> int:
    device: Device | None = None
    reason = ""
    try:
        device = make_device()
    except ImportError as error:
        reason = f"pycuda is not installed ({error})"
    except RuntimeError as error:
        reason = str(error)
    while True:
        header = read.read(_HEADER.size)
        if len(header) < _HEADER.size:
            break
        (length,) = _HEADER.unpack(header)
        wire = msgpack.unpackb(read.read(length), raw=False)
        reply: Reply
        try:
            request = request_from_wire(wire)
        except (UnknownRequest, KeyError, TypeError, ValueError) as error:
            request, reply = None, Failed("error", f"bad request: {error}")
        if isinstance(request, Exit):
            break
        if request is not None:
            device_error = device.cuda.Error if device is not None else Fatal
            try:
                reply = handle(device, reason, request)
            except Fatal as error:
                reply = Failed("fatal", str(error))
            except device_error as error:
                reply = Failed("fatal", f"{type(error).__name__}: {error}")
        exit_after = (isinstance(reply, Failed) and reply.status == "fatal") or \
            (isinstance(reply, CheckVerdict) and reply.status == "original_failed")
        payload = msgpack.packb(reply_to_wire(reply), use_bin_type=True)
        write.write(_HEADER.pack(len(payload)) + payload)
        write.flush()
        if exit_after:
            os._exit(3)  # the context may be unusable; skip teardown that could hang
    if device is not None:
        device.close()
    return 0


def _device_or_reason() -> Device:
    import pycuda.driver as cuda

    try:
        return Device()
    except cuda.Error as error:
        raise RuntimeError(f"{type(error).__name__}: {error}") from error


def main() -> int:
    # Protocol frames use a private copy of stdout; fd 1 goes to stderr so that stray prints
    # (from pycuda, the driver or a kernel's printf) cannot corrupt the protocol.
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return serve(sys.stdin.buffer, protocol_out, _device_or_reason)


if __name__ == "__main__":
    raise SystemExit(main())
