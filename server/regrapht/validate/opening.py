"""Opening what validation needs for a file on disk: source, spec, compiler, worker, evaluator.

Owns the conventions shared by the CLI and the editor: the spec beside the file
(`foo.cu` -> `foo.regrapht.toml`) unless one is given, the cache dir, and starting the GPU
worker only when it finds a device (otherwise the worker is closed and validation runs
without one).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from regrapht.errors import InputError
from regrapht.inputs import read_source as read_source_with_warnings
from regrapht.spec.model import Spec, load_spec, spec_path_for
from regrapht.validate.compile_db import NO_FLAGS, CompileFlags
from regrapht.validate.compiler import Compiler
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator
from regrapht.validate.worker import GpuWorker


def read_source(path: Path) -> str:
    text, _warnings = read_source_with_warnings(path)
    return text


def find_spec(source: Path, spec: Path | None) -> Spec:
    path = spec or spec_path_for(source)
    if not path.is_file():
        raise InputError(
            f"no spec {path.name} beside the file (write one, or run `regrapht spec infer {source} --kernel NAME`)"
            if spec is None else "spec file not found", file=str(path))
    return load_spec(path)


def make_compiler(env: Mapping[str, str], cache_dir: Path) -> Compiler:
    return Compiler.from_environment(env, cache_dir)


def start_worker(env: Mapping[str, str]) -> GpuWorker | None:
    """A GPU worker if it finds a device, else None (the worker process is closed)."""
    worker = GpuWorker(env=env)
    if worker.info().get("device") is None:
        worker.close()
        return None
    return worker


def open_evaluator(source: Path, kernel: str, *, spec: Path | None, arch: str | None, env: Mapping[str, str],
                   cache_dir: Path, worker: GpuWorker | None,
                   settings: CheckSettings | None = None, flags: CompileFlags = NO_FLAGS) -> CudaEvaluator:
    text = read_source(source)
    loaded = find_spec(source, spec)
    return CudaEvaluator(text, kernel, loaded, arch=arch, worker=worker, cache_dir=cache_dir,
                         compiler=make_compiler(env, cache_dir), file=str(source),
                         include_dirs=(str(source.resolve().parent),), flags=flags, settings=settings)
