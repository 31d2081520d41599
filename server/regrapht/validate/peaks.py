"""Device peaks (memory bandwidth, FP32 FLOP rate), measured once per device and cached.

Owns the `peaks` request to the GPU worker (a large device-to-device copy; an FMA-heavy kernel
compiled here) and the msgpack cache file `peaks.msgpack` in the cache dir, keyed by GPU name.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import msgpack

from regrapht.set_aside import set_aside
from regrapht.validate.compiler import Compiler
from regrapht.validate.gpu_lock import GpuLock
from regrapht.validate.gpu_worker import PEAK_KERNEL
from regrapht.validate.worker import GpuWorker
from regrapht.validate.worker_protocol import ModuleRef, Peaks, PeaksReply


@dataclass(frozen=True)
class DevicePeaks:
    gpu: str
    gbps: float  # bytes read + written per second by a device-to-device copy, in GB/s
    gflops: float  # FP32 FMA rate in GFLOP/s


def _read(path: Path) -> dict[str, dict[str, float]]:
    """The peaks table (GPU name -> {"gbps", "gflops"}); an unreadable or misshapen file is set
    aside with a warning and an empty table returned (the peaks are measured again)."""
    try:
        raw = msgpack.unpackb(path.read_bytes(), raw=False)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, TypeError, msgpack.UnpackException) as error:
        set_aside(path, "device peaks cache", str(error) or "empty file")
        return {}
    if not isinstance(raw, dict) or not all(isinstance(gpu, str) and _valid_entry(entry) for gpu, entry in raw.items()):
        set_aside(path, "device peaks cache", "not a table of positive gbps and gflops per GPU")
        return {}
    return raw


def _valid_entry(entry: object) -> bool:
    return isinstance(entry, dict) and all(
        isinstance(entry.get(name), int | float) and not isinstance(entry.get(name), bool)
        and math.isfinite(entry[name]) and entry[name] > 0
        for name in ("gbps", "gflops"))


def _cached(path: Path, gpu: str) -> DevicePeaks | None:
    entry = _read(path).get(gpu)
    return DevicePeaks(gpu, float(entry["gbps"]), float(entry["gflops"])) if entry else None


def device_peaks(worker: GpuWorker, compiler: Compiler, cache_dir: Path, *, arch: str,
                 gpu_lock: GpuLock | None = None, timeout_s: float = 120.0) -> DevicePeaks | None:
    """The cached peaks of the worker's device, measuring them the first time; None without one."""
    info = worker.info()
    device = info.get("device")
    if not isinstance(device, dict):
        return None
    path = cache_dir / "peaks.msgpack"
    if (cached := _cached(path, device["name"])) is not None:
        return cached
    compiled = compiler.compile(PEAK_KERNEL, arch=arch, file="fma_peak.cu")
    if not compiled.ok:
        return None
    lock = gpu_lock or GpuLock.in_dir(cache_dir)
    with lock.hold(timeout_s):
        # another process may have measured them while this one waited for the lock
        if (cached := _cached(path, device["name"])) is not None:
            return cached
        assert compiled.cubin is not None
        reply = worker.request(Peaks(ModuleRef(compiled.cubin, "fma_peak")), timeout_s=timeout_s)
    if not isinstance(reply, PeaksReply):
        return None
    peaks = DevicePeaks(device["name"], reply.gbps, reply.gflops)
    table = _read(path)
    table[peaks.gpu] = {"gbps": peaks.gbps, "gflops": peaks.gflops}
    cache_dir.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
    with os.fdopen(handle, "wb") as out:
        out.write(msgpack.packb(table))
    os.replace(tmp, path)
    return peaks
