"""One search of `regrapht graph distill`: a kernel of a train task at one seed, run through the
optimize workflow, and the verified steps it took as trajectory records (search/distill.py).
Shared by the local command and the cluster's jobs."""

from __future__ import annotations

from typing import Any

from regrapht.app.optimize import ModelCache, OptimizeOptions, OptimizeRequest, run_optimize
from regrapht.app.resources import GpuResources
from regrapht.evaluation.runner import Task
from regrapht.inputs import read_source
from regrapht.search.distill import trajectories_of
from regrapht.search.run import SearchRun
from regrapht.spec.model import KernelSpec


def distill_search(task: Task, kernel: KernelSpec, *, strategy: str, budget: int, seed: int,
                   options: OptimizeOptions, models: ModelCache,
                   resources: GpuResources) -> tuple[list[dict[str, Any]], str]:
    """The trajectory records of one search, and a line saying what it found."""
    source, _warnings = read_source(task.source_path)  # size-limited, UTF-8 checked
    finished: list[SearchRun] = []
    request = OptimizeRequest(kernel.name, source, task.source_path, task.spec, strategy, budget, seed, options)
    result = run_optimize(request, resources, models=models, on_finish=finished.append).result
    assert result is not None  # distill searches without a device too (compile-only)
    found = trajectories_of(finished[0], task=task.name, strategy=strategy, seed=seed, graph=finished[0].graph)
    best = f"best {result.best.speedup:.2f}x" if result.best is not None else result.reason
    return found, f"{task.name}/{kernel.name} seed {seed}: {len(found)} verified trajectories ({best})"
