"""Wiring the real collaborators of an optimize run: spec, evaluator, GPU worker, graph, model.

The CLI commands (`optimize`, `eval`) and the editor feature all need the same objects built the
same way; the search engine itself only ever receives them as arguments. `OptimizeRun` owns the
GPU worker process and closes it; `save_statistics` writes this machine's edge statistics to the
user-local overlay (never to the bundled graph).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from regrapht.errors import InputError
from regrapht.graph import ReasoningGraph, default_overlay_path, merge_into_file, open_graph
from regrapht.search.pipeline import KernelTarget
from regrapht.spec.expr import names_in
from regrapht.spec.model import KernelSpec, Spec
from regrapht.spec.resolve import resolve, size_scalar, spec_launch
from regrapht.validate.bench import default_cache_dir
from regrapht.validate.evaluator import CudaEvaluator
from regrapht.validate.worker import GpuWorker

MODEL_STRATEGIES = ("mcgs", "random", "greedy", "cot")


def cache_dir(env: Mapping[str, str], home: Path) -> Path:
    """The validation engine's cache dir (the same for bench, check, optimize and the editor)."""
    path = default_cache_dir(env, home)
    path.mkdir(parents=True, exist_ok=True)
    return path


def kernel_target(kernel: KernelSpec) -> KernelTarget:
    """The spec's launch as expressions, and the counts/values it fixes: buffer counts and integer
    scalars that do not depend on the problem-size scalar (which the odd-size check changes), so
    an applier may size a shared array by them (`bins`, `nbins`)."""
    constants: dict[str, int] = {}
    for arg in kernel.args:
        raw = arg.count if arg.is_pointer else None
        if isinstance(raw, int) and not isinstance(raw, bool):
            constants[arg.name] = raw
        elif isinstance(raw, str) and re.fullmatch(r"\s*\d+\s*", raw):
            constants[arg.name] = int(raw)
    size = size_scalar(kernel)
    try:
        resolved = resolve(kernel)
    except InputError:
        return KernelTarget(spec_launch(kernel), constants)
    for buffer, arg in zip(resolved.buffers, (a for a in kernel.args if a.is_pointer), strict=False):
        if size is None or size not in names_in(arg.count if arg.count is not None else ""):
            constants.setdefault(buffer.name, buffer.count)
    for name, value in resolved.scalars.items():
        if name != size and isinstance(value, int) and not isinstance(value, bool):
            constants.setdefault(name, value)
    return KernelTarget(spec_launch(kernel), constants)


@dataclass
class OptimizeRun:
    evaluator: CudaEvaluator
    worker: GpuWorker
    graph: ReasoningGraph
    overlay_path: Path
    target: KernelTarget

    def close(self) -> None:
        self.worker.close()

    def __enter__(self) -> OptimizeRun:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()


def open_run(
    source: str,
    file: str,
    kernel: str,
    spec: Spec,
    *,
    env: Mapping[str, str],
    home: Path,
    arch: str | None = None,
    graph_path: Path | None = None,
) -> OptimizeRun:
    """Everything one optimize run needs (InputError for a bad spec, kernel or graph file)."""
    kernel_spec = spec.kernel(kernel)
    overlay_path = default_overlay_path(env, home)
    graph = open_graph(graph_path, overlay_path)
    worker = GpuWorker(env=env)
    try:
        evaluator = CudaEvaluator(source, kernel_spec.name, kernel_spec, arch=arch, worker=worker,
                                  cache_dir=cache_dir(env, home), file=file,
                                  include_dirs=(str(Path(file).resolve().parent),))
    except BaseException:
        worker.close()
        raise
    return OptimizeRun(evaluator, worker, graph, overlay_path, kernel_target(kernel_spec))


def save_statistics(graph: ReasoningGraph, overlay_path: Path) -> None:
    """Add this run's verified outcomes to the overlay file (keeping other runs' saves)."""
    new_outcomes = graph.take_unsaved()
    if len(new_outcomes):
        graph.apply_overlay(merge_into_file(overlay_path, new_outcomes))
