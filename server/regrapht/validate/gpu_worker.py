"""The GPU worker process (`python -m regrapht.validate.gpu_worker`): pycuda lives only here.

Owns everything that touches the device: loading cubins, making buffers from the spec with
guard regions (0xA5 canaries before and after each buffer), poisoning `out` buffers (0xFF),
running the original and the candidate on identical inputs, checking inputs unchanged, guards
intact and outputs equal (compare.py), timing with CUDA events (warm-up, L2 flushed by writing a
2x-L2 buffer before every run), and measuring device peaks. Requests and replies are msgpack
frames on stdin/stdout (worker.py is the parent side). A CUDA error that poisons the context is
answered with status "fatal" and the process exits; the parent starts a fresh one.
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, BinaryIO

import msgpack
import numpy as np

from regrapht.spec.init import Init, generate
from regrapht.validate.compare import GUARD_BYTE, POISON_BYTE, changed_input, compare_output, damaged_guard

GUARD_BYTES = 16 * 1024
REFERENCE_CACHE_BYTES = 2 << 30  # host memory for the original's inputs and outputs per trial
_HEADER = struct.Struct(">I")


class Fatal(Exception):
    """A device error after which the context cannot be trusted."""


class Device:
    """The CUDA context and helpers; constructed only when pycuda and a device are present."""

    def __init__(self) -> None:
        import pycuda.driver as cuda

        self.cuda = cuda
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
        self.total_bytes = int(self.device.total_memory())
        self.flush_buffer = cuda.mem_alloc(max(2 * self.l2_bytes, 1 << 20))
        self.flush_size = max(2 * self.l2_bytes, 1 << 20)
        # (original module, trial) -> (inputs, the original's outputs): the original is run once
        # per trial, however many candidates are checked against it
        self.references: OrderedDict[str, tuple[dict[str, np.ndarray], dict[str, np.ndarray]]] = OrderedDict()

    def remember(self, key: str, host: dict[str, np.ndarray], reference: dict[str, np.ndarray]) -> None:
        self.references[key] = (host, reference)
        def size(entry: tuple[dict[str, np.ndarray], dict[str, np.ndarray]]) -> int:
            return sum(a.nbytes for part in entry for a in part.values())
        while len(self.references) > 1 and sum(size(e) for e in self.references.values()) > REFERENCE_CACHE_BYTES:
            self.references.popitem(last=False)

    def info(self) -> dict[str, Any]:
        return {"name": self.name, "cc": self.cc, "l2_bytes": self.l2_bytes, "sms": self.sms,
                "total_bytes": self.total_bytes, "driver": self.cuda.get_driver_version()}

    def close(self) -> None:
        self.context.pop()

    def load(self, module: dict[str, Any]) -> Any:
        mod = self.cuda.module_from_buffer(module["cubin"])
        return mod, mod.get_function(module["entry"])

    def flush_l2(self, value: int) -> None:
        self.cuda.memset_d8(self.flush_buffer, value & 0xFF, self.flush_size)


class Buffers:
    """Device buffers of one resolved kernel, each between two guard regions."""

    def __init__(self, dev: Device, kernel: dict[str, Any], host: dict[str, np.ndarray]) -> None:
        self.dev = dev
        self.kernel = kernel
        self.host = host  # initial contents of in/inout (and out with init)
        self.allocs: dict[str, Any] = {}
        self.ptrs: dict[str, int] = {}
        cuda = dev.cuda
        for buf in kernel["buffers"]:
            nbytes = host[buf["name"]].nbytes if buf["name"] in host else buf["count"] * np.dtype(buf["dtype"]).itemsize
            alloc = cuda.mem_alloc(nbytes + 2 * GUARD_BYTES)
            cuda.memset_d8(alloc, GUARD_BYTE, nbytes + 2 * GUARD_BYTES)
            self.allocs[buf["name"]] = alloc
            self.ptrs[buf["name"]] = int(alloc) + GUARD_BYTES

    def nbytes(self, buf: dict[str, Any]) -> int:
        return int(buf["count"]) * np.dtype(buf["dtype"]).itemsize

    def fill(self, roles: tuple[str, ...] = ("in", "inout", "out")) -> None:
        """(Re)write buffer contents: inputs and inits from `host`, init-less outs poisoned."""
        cuda = self.dev.cuda
        for buf in self.kernel["buffers"]:
            if buf["role"] not in roles:
                continue
            if buf["name"] in self.host:
                cuda.memcpy_htod(self.ptrs[buf["name"]], self.host[buf["name"]])
            else:
                cuda.memset_d8(self.ptrs[buf["name"]], POISON_BYTE, self.nbytes(buf))

    def read(self, name: str) -> np.ndarray:
        buf = next(b for b in self.kernel["buffers"] if b["name"] == name)
        out = np.empty(int(buf["count"]), dtype=np.dtype(buf["dtype"]))
        self.dev.cuda.memcpy_dtoh(out, self.ptrs[name])
        return out

    def guards(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        buf = next(b for b in self.kernel["buffers"] if b["name"] == name)
        before = np.empty(GUARD_BYTES, dtype=np.uint8)
        after = np.empty(GUARD_BYTES, dtype=np.uint8)
        self.dev.cuda.memcpy_dtoh(before, int(self.allocs[name]))
        self.dev.cuda.memcpy_dtoh(after, self.ptrs[name] + self.nbytes(buf))
        return before, after

    def args(self, kernel: dict[str, Any]) -> list[Any]:
        values: list[Any] = []
        for name, kind in kernel["args"]:
            if kind == "buffer":
                values.append(np.uintp(self.ptrs[name]))
            else:
                values.append(np.dtype(kernel["scalar_dtypes"][name]).type(kernel["scalars"][name]))
        return values

    def free(self) -> None:
        for alloc in self.allocs.values():
            alloc.free()
        self.allocs.clear()


def make_inputs(kernel: dict[str, Any], seed: int) -> dict[str, np.ndarray]:
    """Host contents for every buffer that has an init, drawn from `seed`."""
    rng = np.random.default_rng(seed)
    host = {}
    for buf in kernel["buffers"]:
        if buf["init"] is not None:
            kind, params = buf["init"]
            host[buf["name"]] = generate(Init(kind, tuple(params)), int(buf["count"]), buf["dtype"], rng)
    return host


def launch(dev: Device, function: Any, kernel: dict[str, Any], buffers: Buffers) -> None:
    shared = int(kernel["shared_bytes"])
    if shared > 48 * 1024:
        function.set_attribute(dev.cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)
    function(*buffers.args(kernel), block=tuple(kernel["block"]), grid=tuple(kernel["grid"]), shared=shared)


def run_and_sync(dev: Device, function: Any, kernel: dict[str, Any], buffers: Buffers, who: str) -> None:
    try:
        launch(dev, function, kernel, buffers)
        dev.context.synchronize()
    except dev.cuda.Error as error:
        raise Fatal(f"{who}: {error}") from error


def check(dev: Device, request: dict[str, Any]) -> dict[str, Any]:
    original_mod, original_fn = dev.load(request["original"])
    candidate_mod, candidate_fn = dev.load(request["candidate"])
    modules = (original_mod, candidate_mod)  # loaded for the whole check: state persists across trials
    original_id = hashlib.sha256(request["original"]["cubin"]).hexdigest() + request["original"]["entry"]
    reused = 0
    for trial in request["trials"]:
        ref_kernel, cand_kernel, label = trial["original"], trial["candidate"], trial["label"]
        key = hashlib.sha256(msgpack.packb([original_id, ref_kernel, trial["seed"]])).hexdigest()
        outputs = [b for b in ref_kernel["buffers"] if b["role"] in ("out", "inout")]
        if key in dev.references:
            host, reference = dev.references[key]
            dev.references.move_to_end(key)
            reused += 1
        else:
            host = make_inputs(ref_kernel, int(trial["seed"]))
            reference = {}
        buffers = Buffers(dev, ref_kernel, host)
        try:
            if not reference:
                buffers.fill()
                try:
                    run_and_sync(dev, original_fn, ref_kernel, buffers, "original")
                except Fatal as error:
                    return {"status": "original_failed", "reason": f"{error} ({label})", "fatal": True}
                reference = {b["name"]: buffers.read(b["name"]) for b in outputs}
                dev.remember(key, host, reference)
            for run in range(int(trial.get("candidate_runs", 1))):
                buffers.fill()
                run_and_sync(dev, candidate_fn, cand_kernel, buffers, "candidate")
                where = f" ({label}, run {run + 1})" if run else f" ({label})"
                for buf in ref_kernel["buffers"]:
                    before, after = buffers.guards(buf["name"])
                    if reason := damaged_guard(buf["name"], before, after, GUARD_BYTES):
                        return {"status": "wrong", "reason": reason + where}
                for buf in ref_kernel["buffers"]:
                    if buf["role"] == "in" and (reason := changed_input(buf["name"], host[buf["name"]],
                                                                      buffers.read(buf["name"]))):
                        return {"status": "wrong", "reason": reason + where}
                for buf in outputs:
                    got = buffers.read(buf["name"])
                    reason = compare_output(buf["name"], reference[buf["name"]], got,
                                            rtol=float(ref_kernel["rtol"]), atol=float(ref_kernel["atol"]))
                    if reason:
                        return {"status": "wrong", "reason": reason + where}
        finally:
            buffers.free()
    return {"status": "ok", "trials": len(request["trials"]), "modules": len(modules), "reused": reused}


def time_kernel(dev: Device, request: dict[str, Any]) -> dict[str, Any]:
    _module, function = dev.load(request["module"])
    kernel = request["kernel"]
    host = make_inputs(kernel, 0)
    buffers = Buffers(dev, kernel, host)
    cuda = dev.cuda
    start, end = cuda.Event(), cuda.Event()
    times: list[float] = []
    pristine: list[tuple[int, Any, int]] = []  # (buffer pointer, pristine copy, bytes)
    try:
        buffers.fill()
        for buf in kernel["buffers"]:
            if buf["role"] in ("inout", "out"):
                nbytes = buffers.nbytes(buf)
                copy = cuda.mem_alloc(nbytes)
                cuda.memcpy_dtod(copy, buffers.ptrs[buf["name"]], nbytes)
                pristine.append((buffers.ptrs[buf["name"]], copy, nbytes))

        def one(i: int) -> float:
            for pointer, copy, nbytes in pristine:  # device-to-device: cheap, and outside the events
                cuda.memcpy_dtod(pointer, copy, nbytes)
            dev.flush_l2(i)
            start.record()
            launch(dev, function, kernel, buffers)
            end.record()
            end.synchronize()
            return float(end.time_since(start))

        try:
            warm = [one(i) for i in range(max(1, int(request["warmup"])))]
            estimate = max(min(warm), 1e-3)
            runs = int(min(max(request["min_runs"], request["target_ms"] / estimate), request["max_runs"]))
            times = [one(i) for i in range(runs)]
        except cuda.Error as error:
            raise Fatal(f"timing: {error}") from error
    finally:
        for _pointer, copy, _nbytes in pristine:
            copy.free()
        buffers.free()
    return {"status": "ok", "times_ms": times}


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


def peaks(dev: Device, request: dict[str, Any]) -> dict[str, Any]:
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
    _module, function = dev.load(request["fma"])
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
    return {"status": "ok", "gbps": 2 * size / (copy_ms * 1e-3) / 1e9, "gflops": float(max(rates[1:])),
            "device": dev.info()}


def serve(read: BinaryIO, write: BinaryIO, make_device: Callable[[], Device]) -> int:
    device: Device | None = None
    reason = ""
    try:
        device = make_device()
    except ImportError as error:
        reason = f"pycuda is not installed ({error})"
    except RuntimeError as error:
        reason = str(error)
    handlers: dict[str, Callable[[Device, dict[str, Any]], dict[str, Any]]] = {
        "check": check, "time": time_kernel, "peaks": peaks,
    }
    while True:
        header = read.read(_HEADER.size)
        if len(header) < _HEADER.size:
            break
        (length,) = _HEADER.unpack(header)
        request = msgpack.unpackb(read.read(length), raw=False)
        op = request.get("op")
        exit_after = False
        if op == "exit":
            break
        if op == "hello":
            reply = {"status": "ok", "device": device.info() if device else None, "reason": reason,
                     "pid": os.getpid()}
        elif device is None:
            reply = {"status": "no_device", "reason": reason or "no CUDA device present"}
        elif op in handlers:
            try:
                reply = handlers[op](device, request)
            except Fatal as error:
                reply = {"status": "fatal", "reason": str(error)}
            except device.cuda.Error as error:
                reply = {"status": "fatal", "reason": f"{type(error).__name__}: {error}"}
            exit_after = reply.get("status") == "fatal" or bool(reply.get("fatal"))
        else:
            reply = {"status": "error", "reason": f"unknown op {op!r}"}
        payload = msgpack.packb(reply, use_bin_type=True)
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
