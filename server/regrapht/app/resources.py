"""What the optimize and validation workflows of one process share: the GPU and its cache.

`GpuResources` owns the one cache dir (compile cache, device peaks, validation results, edge
statistics stay in their own files), the one GPU lock in it, the one compiler, and the one GPU
worker process (the worker drives device 0: one worker per GPU). A language server makes one
for its lifetime and hands it to both workflows and to the compiler confirmation of findings,
so a validation on save and a running search take the same lock and talk to the same worker,
and every nvcc run of the server goes through one `Compiler`; a CLI command makes one for its run.

The worker starts on first use. Without a device it is closed again but kept as an object: its
cached `hello` reply says why there is no device, and evaluators report that reason.

The compiler and worker modules are imported by their default factories, on first use: the
language server makes its `GpuResources` at start and must not load them then.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from regrapht.errors import InputError
from regrapht.validate.cache_dir import default_cache_dir
from regrapht.validate.gpu_lock import GpuLock

if TYPE_CHECKING:
    from regrapht.validate.compiler import Compiler
    from regrapht.validate.worker import GpuWorker


def default_compiler(env: Mapping[str, str], cache_dir: Path) -> Compiler | None:
    """nvcc per the environment (`Compiler.found`), compiling into `cache_dir`; None without nvcc."""
    from regrapht.validate.compiler import Compiler

    return Compiler.found(env, cache_dir)


def default_worker(env: Mapping[str, str]) -> GpuWorker:
    """The GPU worker process (not started until its first request)."""
    from regrapht.validate.worker import GpuWorker

    return GpuWorker(env=env)


class GpuResources:
    """The cache dir, GPU lock, compiler and GPU worker of one process; thread-safe."""

    def __init__(self, env: Mapping[str, str], home: Path, *,
                 make_worker: Callable[[Mapping[str, str]], GpuWorker] = default_worker,
                 make_compiler: Callable[[Mapping[str, str], Path], Compiler | None] = default_compiler) -> None:
        self.env = dict(env)
        self.home = home
        self.cache_dir = default_cache_dir(self.env, home)
        self.gpu_lock = GpuLock.in_dir(self.cache_dir)
        self._make_worker = make_worker
        self._make_compiler = make_compiler
        self._lock = threading.Lock()
        self._compiler: Compiler | None = None
        self._worker: GpuWorker | None = None

    def ensure_cache_dir(self) -> Path:
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        return self.cache_dir

    def compiler(self) -> Compiler:
        """The compiler; an `InputError` where nvcc is not installed (the workflows need it)."""
        compiler = self.compiler_if_found()
        if compiler is None:
            from regrapht.validate.compiler import NVCC_NOT_FOUND

            raise InputError(NVCC_NOT_FOUND)
        return compiler

    def compiler_if_found(self) -> Compiler | None:
        """The compiler, or None where nvcc is not installed (for optional work such as the
        editor's compiler confirmation); looked up again on the next call until found."""
        with self._lock:
            if self._compiler is None:
                self._compiler = self._make_compiler(self.env, self.ensure_cache_dir())
            return self._compiler

    def worker(self) -> GpuWorker:
        """The GPU worker, started on first use (its `info()` says whether it found a device)."""
        with self._lock:
            if self._worker is None:
                worker = self._make_worker(self.env)
                if worker.info().get("device") is None:
                    worker.close()  # nothing to run on: no idle process; the reason stays cached
                self._worker = worker
            return self._worker

    def device_worker(self) -> GpuWorker | None:
        """The GPU worker if it found a device, else None."""
        worker = self.worker()
        return worker if worker.info().get("device") is not None else None

    def close(self) -> None:
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.close()

    def __enter__(self) -> GpuResources:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
