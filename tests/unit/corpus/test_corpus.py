"""bench/corpus: every task parses, resolves (also at the smaller odd size every check runs),
is sized to be bandwidth- or compute-bound on a large GPU, belongs to a family present in both
splits, is not a copy of a bench task or example kernel, and compiles with nvcc for sm_90 with
its kernel found by the spec's parameter types."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from regrapht.evaluation.runner import Task, load_task, traffic
from regrapht.spec.resolve import odd_size_variant, resolve
from regrapht.validate.compiler import Compiler
from regrapht.validate.evaluator import CudaEvaluator

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "bench" / "corpus"
SPLITS = ("test", "train")
FAMILIES = {
    "elementwise", "reduction", "rowop", "scan", "gemv", "gemm", "batched_gemm", "permute", "stencil", "conv",
    "histogram", "sparse", "gather_scatter", "argmax_topk",
}


def task_dirs(split: str) -> list[Path]:
    return sorted(p for p in (CORPUS / split).iterdir() if p.is_dir())


ALL_DIRS = [d for split in SPLITS for d in task_dirs(split)]


def test_the_corpus_has_two_splits_covering_every_family() -> None:
    assert len(ALL_DIRS) >= 44
    names = [d.name for d in ALL_DIRS]
    assert len(set(names)) == len(names), "a task name appears in both splits"
    per_split = {split: [json.loads((d / "task.json").read_text())["family"] for d in task_dirs(split)]
                 for split in SPLITS}
    for split, families in per_split.items():
        assert set(families) == FAMILIES, f"{split}: {sorted(FAMILIES ^ set(families))}"
    for family in FAMILIES:
        assert per_split["test"].count(family) + per_split["train"].count(family) >= 2, family
    sizes = [len(v) for v in per_split.values()]
    # The train split grows with development kernels; the held-out test split stays a large part.
    assert min(sizes) >= 0.3 * sum(sizes)


@pytest.mark.parametrize("directory", ALL_DIRS, ids=lambda d: f"{d.parent.name}/{d.name}")
def test_each_task_loads_resolves_and_is_big_enough(directory: Path) -> None:
    task = load_task(directory)
    assert task.family in FAMILIES
    assert len(task.spec.kernels) == 1
    kernel = task.spec.kernels[0]
    resolved = resolve(kernel)
    bytes_moved, _ = traffic(kernel, None)
    assert 16 << 20 <= bytes_moved <= 1 << 30, f"{bytes_moved / 2**20:.0f} MiB"
    # every check also runs a smaller size that is not a multiple of the block: it must exist
    overrides = odd_size_variant(kernel, resolved)
    assert overrides is not None and all(b.count > 0 for b in resolve(kernel, overrides=overrides).buffers)
    if kernel.flops is None:
        pytest.fail("every corpus kernel states its FLOPs (spec key flops)")


def _kernel_bodies(paths: list[Path]) -> set[str]:
    bodies = set()
    for path in paths:
        text = re.sub(r"//[^\n]*|/\*.*?\*/", "", path.read_text(encoding="utf-8"), flags=re.S)
        bodies.update(" ".join(m.split()) for m in re.findall(r"__global__[^{]*\{.*?\n\}", text, flags=re.S))
    return bodies


def test_no_kernel_is_copied_from_the_bench_tasks_or_examples() -> None:
    theirs = _kernel_bodies(sorted((ROOT / "bench" / "tasks").glob("*/*.cu")) + sorted((ROOT / "examples").glob("*.cu")))
    ours = _kernel_bodies([d / f"{d.name}.cu" for d in ALL_DIRS])
    assert theirs and len(ours) == len(ALL_DIRS)
    assert not ours & theirs


def _compile(task: Task, cache: Path) -> str:
    compiler = Compiler.from_environment(os.environ, cache)
    kernel = task.spec.kernels[0]
    evaluator = CudaEvaluator(task.source_path.read_text(encoding="utf-8"), kernel.name, kernel, arch="sm_90",
                              worker=None, cache_dir=cache, compiler=compiler, file=str(task.source_path))
    return evaluator.original_entry


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH")
def test_every_corpus_kernel_compiles_for_sm90_and_is_found_by_its_spec(tmp_path: Path) -> None:
    tasks = [load_task(d) for d in ALL_DIRS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        entries = list(pool.map(lambda t: _compile(t, tmp_path / "cache"), tasks))
    assert all(entries) and len(entries) == len(tasks)


def test_every_corpus_kernel_has_a_numpy_reference_for_each_output() -> None:
    """bench/corpus/check_references.py (run on the GPU host) proves the naive kernels right; here
    its references are checked to exist and to give every out/inout buffer its full size."""
    sys.path.insert(0, str(CORPUS))
    try:
        import check_references
    finally:
        sys.path.remove(str(CORPUS))
    assert set(check_references.REFERENCES) == {d.name for d in ALL_DIRS}
    for directory in ALL_DIRS:
        ready = check_references.prepare(directory)
        for buffer in ready.resolved.buffers:
            if buffer.role != "in":
                assert np.asarray(ready.expected[buffer.name]).size == buffer.count, (directory.name, buffer.name)
