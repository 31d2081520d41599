"""Background validation of a file's kernels that have a spec: what the editor shows on save.

Owns compiling the file once (diagnostics mapped to its lines), per-kernel resources and
occupancy for the spec's launch, and, with a device, timing against the device's peaks with
the slow-kernel message; results are cached (msgpack) in the workspace cache dir keyed by
(the compile's key - the source, the project's flags and every included file -, spec hash,
arch, GPU name). No pygls: the feature module converts.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack

from regrapht.errors import InputError
from regrapht.set_aside import RowType, row_fits, set_aside
from regrapht.spec.model import Spec
from regrapht.validate.bench import bench, slow_kernel_message
from regrapht.validate.compile_db import NO_FLAGS, CompileFlags
from regrapht.validate.compiler import DIAGNOSTIC_ROW, Compiler, CompileResult, Diagnostic
from regrapht.validate.evaluator import CudaEvaluator
from regrapht.validate.gpu_lock import GpuLock
from regrapht.validate.worker import GpuWorker

CACHE_FORMAT = 2  # 2: the kernels' `guessed` keys


@dataclass(frozen=True)
class KernelValidation:
    kernel: str
    report: dict[str, Any] | None  # BenchReport.to_json(), the CLI's bench JSON
    slow_message: str | None
    error: str | None = None
    guessed: tuple[str, ...] = ()  # the spec's guesses: compiled and checked, never timed in the background


@dataclass(frozen=True)
class FileValidation:
    diagnostics: tuple[Diagnostic, ...]
    kernels: tuple[KernelValidation, ...]
    cached: bool = False


def _key(compiled: CompileResult, spec: Spec, arch: str, gpu: str | None) -> str:
    return hashlib.sha256("\0".join((compiled.key, spec.digest, arch, gpu or "")).encode()).hexdigest()


def _load(path: Path) -> FileValidation | None:
    """The cached validation; None if there is none, or if the entry is unreadable or of another
    shape (then it is set aside with a warning and the validation runs again)."""
    try:
        raw = msgpack.unpackb(path.read_bytes(), raw=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, msgpack.UnpackException) as error:
        set_aside(path, "validation cache entry", str(error) or "empty file")
        return None
    if not isinstance(raw, dict) or raw.get("format") != CACHE_FORMAT:
        set_aside(path, "validation cache entry", f"not a format-{CACHE_FORMAT} entry")
        return None
    diagnostics, kernels = raw.get("diagnostics"), raw.get("kernels")
    if not (isinstance(diagnostics, list) and isinstance(kernels, list)
            and all(row_fits(d, DIAGNOSTIC_ROW) for d in diagnostics)
            and all(row_fits(k, _KERNEL_ROW) for k in kernels)):
        set_aside(path, "validation cache entry", "a diagnostic or kernel entry has the wrong shape")
        return None
    return FileValidation(tuple(Diagnostic(*d) for d in diagnostics),
                          tuple(KernelValidation(k[0], k[1], k[2], k[3], tuple(k[4])) for k in kernels), cached=True)


_KERNEL_ROW: tuple[RowType, ...] = (str, (dict, type(None)), (str, type(None)), (str, type(None)), list)


def _store(path: Path, result: FileValidation) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = msgpack.packb({
        "format": CACHE_FORMAT,
        "diagnostics": [[d.file, d.line, d.severity, d.message, d.code] for d in result.diagnostics],
        "kernels": [[k.kernel, k.report, k.slow_message, k.error, list(k.guessed)] for k in result.kernels],
    })
    handle, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.replace(tmp, path)


def validate_file(
    path: Path,
    text: str,
    spec: Spec,
    *,
    compiler: Compiler,
    worker: GpuWorker | None,
    cache_dir: Path,
    arch: str,
    kernels: tuple[str, ...] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    on_step: Callable[[str], None] = lambda message: None,
    gpu_lock: GpuLock | None = None,
    flags: CompileFlags = NO_FLAGS,
) -> FileValidation:
    """Compile `text` (the file at `path`, with the project's `flags`), then bench each spec kernel (or `kernels`); timing
    holds `gpu_lock` (default: the lock file in `cache_dir`)."""
    gpu = None
    if worker is not None:
        device = worker.info().get("device")
        gpu = device["name"] if isinstance(device, dict) else None
        if gpu is None:
            worker = None
    on_step(f"compiling {path.name}")
    # compiled first (a cache hit when nothing it includes changed): its key keys the validation
    compiled = compiler.compile(text, arch=arch, file=str(path), include_dirs=(str(path.parent),), flags=flags)
    if not compiled.ok:
        return FileValidation(compiled.diagnostics, ())
    cache_file = cache_dir / "validation" / f"{_key(compiled, spec, arch, gpu)}.msgpack"
    if kernels is None and (hit := _load(cache_file)) is not None:
        return hit
    results = []
    for kernel in spec.kernels:
        if kernels is not None and kernel.name not in kernels:
            continue
        # the stop flag is read between the steps (compile, check, time): a step already
        # running on the GPU cannot be interrupted, but nothing new starts after a cancel
        if should_stop():
            break
        on_step(f"checking {kernel.name} (resources, occupancy)")
        try:
            evaluator = CudaEvaluator(text, kernel.name, spec, arch=arch, worker=worker, cache_dir=cache_dir,
                                      compiler=compiler, file=str(path), include_dirs=(str(path.parent),),
                                      flags=flags, gpu_lock=gpu_lock)
            if should_stop():
                break
            measure = worker is not None and not kernel.guessed  # never timed on guesses unasked
            if measure:
                on_step(f"timing {kernel.name}")
            report = bench(evaluator, measure=measure)
        except InputError as error:
            results.append(KernelValidation(kernel.name, None, None, str(error), kernel.guessed))
            continue
        results.append(KernelValidation(kernel.name, report.to_json(), slow_kernel_message(report), None,
                                        kernel.guessed))
    result = FileValidation(compiled.diagnostics, tuple(results))
    if kernels is None and not should_stop():
        _store(cache_file, result)
    return result
