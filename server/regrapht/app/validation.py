"""The validation workflow in the editor: compile and measure a file's kernels that have a spec.

`ValidationService.run` checks that the file has a spec beside it, then runs
`regrapht.validate.background.validate_file` on the process's shared `GpuResources`: the same
cache dir (so the same GPU lock file), compiler and GPU worker as the Optimize workflow, so a
validation on save never times kernels while a search does. One validation at a time.

The validation engine (evaluator, numpy, msgpack caches) and the spec parser are imported by
`run`, in the worker thread of the first validation: the language server does not load them to start.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from regrapht.app.resources import GpuResources
from regrapht.limits import DEFAULT_ARCH
from regrapht.validate.compile_db import NO_FLAGS, CompileFlags

if TYPE_CHECKING:
    from regrapht.validate.background import FileValidation
    from regrapht.validate.profiler import Profile, ProfileFailure
    from regrapht.validate.timing_history import Measured, Regression


class ValidationService:
    def __init__(self, resources: GpuResources) -> None:
        self.resources = resources
        self._lock = threading.Lock()

    def run(self, path: Path | None, text: str, kernels: tuple[str, ...] | None, *, arch: str | None = None,
            should_stop: Callable[[], bool] = lambda: False,
            on_step: Callable[[str], None] = lambda message: None,
            flags: CompileFlags = NO_FLAGS) -> tuple[Path, FileValidation] | None:
        """The file's validation (compiled with the project's `flags`); None when it has no spec
        beside it (or is not a file)."""
        from regrapht.spec.model import load_spec, spec_path_for
        from regrapht.validate.background import validate_file

        if path is None:
            return None
        spec_file = spec_path_for(path)
        if not spec_file.is_file():
            return None
        resources = self.resources
        with self._lock:
            result = validate_file(path, text, load_spec(spec_file), compiler=resources.compiler(),
                                   worker=resources.device_worker(), cache_dir=resources.ensure_cache_dir(),
                                   arch=arch or DEFAULT_ARCH, kernels=kernels, should_stop=should_stop,
                                   on_step=on_step, gpu_lock=resources.gpu_lock, flags=flags)
        return path, result

    def record_timings(self, path: Path, text: str, result: FileValidation,
                       now: Callable[[], float] | None = None) -> tuple[Regression, ...]:
        """Keep every kernel's fresh measurement in the timing history (a cached validation
        measured nothing new) and return the kernels that became slower than their last version."""
        import time

        from regrapht.validate.timing_history import Measured, TimingHistory, text_digest

        if result.cached:
            return ()
        history = TimingHistory(self.resources.ensure_cache_dir() / "timings")
        digest, at = text_digest(text), (now or time.time)()
        found = []
        for kernel in result.kernels:
            report = kernel.report
            if report is None or report.get("time_ms") is None or not report.get("gpu"):
                continue
            measured = Measured(digest, float(report["time_ms"]), float(report["time_p10_ms"]),
                                float(report["time_p90_ms"]), at, text)
            regression = history.record(str(path), kernel.kernel, str(report["gpu"]), measured)
            if regression is not None:
                found.append(regression)
        return tuple(found)

    def measured_gpus(self, path: Path, kernel: str) -> tuple[str, ...]:
        """The GPUs `kernel` of the file at `path` was measured on (most recent last)."""
        from regrapht.validate.timing_history import TimingHistory

        return TimingHistory(self.resources.ensure_cache_dir() / "timings").gpus(str(path), kernel)

    def fastest_version(self, path: Path, kernel: str, gpu: str) -> Measured | None:
        """The fastest measured version of `kernel` in the file at `path` on `gpu`, if any."""
        from regrapht.validate.timing_history import TimingHistory

        return TimingHistory(self.resources.ensure_cache_dir() / "timings").fastest(str(path), kernel, gpu)

    def profile(self, path: Path, text: str, kernel: str, *, arch: str | None = None,
                flags: CompileFlags = NO_FLAGS) -> Profile | ProfileFailure:
        """One launch of `kernel` (the file's text, its spec beside it) under Nsight Compute."""
        from regrapht.spec.model import load_spec, spec_path_for
        from regrapht.spec.resolve import spec_launch
        from regrapht.validate.evaluator import CudaEvaluator
        from regrapht.validate.profiler import ProfileFailure, find_ncu, profile_kernel
        from regrapht.validate.types import Candidate

        ncu = find_ncu(self.resources.env)
        if ncu is None:
            return ProfileFailure("ncu (Nsight Compute) not found on PATH or beside nvcc")
        worker = self.resources.device_worker()
        if worker is None:
            return ProfileFailure("no CUDA device")
        resources = self.resources
        with self._lock:
            evaluator = CudaEvaluator(text, kernel, load_spec(spec_path_for(path)), arch=arch, worker=worker,
                                      cache_dir=resources.ensure_cache_dir(), compiler=resources.compiler(),
                                      file=str(path), include_dirs=(str(path.parent),), flags=flags,
                                      gpu_lock=resources.gpu_lock)
            return profile_kernel(evaluator, Candidate(text, spec_launch(evaluator.kernel)), ncu,
                                  env=resources.env)
