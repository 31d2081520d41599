"""Compile-only check of rewritten sources with the real nvcc (tests marked `nvcc`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")


def compile_ok(source: str, where: Path, name: str = "k", spills_allowed: bool = False) -> None:
    """`spills_allowed`: for grids whose points declare `__launch_bounds__(block)`, where the
    compiler spills rather than exceed a large block's registers (and the launch fail)."""
    path = where / f"{name}.cu"
    path.write_text(source)
    ptxas = "--warning-as-error" if spills_allowed else "--warn-on-spills,--warning-as-error"
    done = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-Xptxas", ptxas,
                           "-o", str(where / f"{name}.cubin"), str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{source}\n{done.stderr}"


def compile_together(sources: list[str], where: Path, name: str = "all", spills_allowed: bool = False) -> None:
    """Compile several rewritten sources as one translation unit (each in a namespace of its
    own, the `#include`s hoisted): one nvcc run for a whole parameter grid."""
    includes: set[str] = set()
    parts = []
    for number, source in enumerate(sources):
        lines = source.splitlines()
        includes |= {line for line in lines if line.lstrip().startswith("#include")}
        body = "\n".join(line for line in lines if not line.lstrip().startswith("#include"))
        parts.append(f"namespace variant{number} {{\n{body}\n}}")
    compile_ok("\n".join([*sorted(includes), *parts]), where, name, spills_allowed)


def grid_sample(rewrites: list[T], first: int = 4) -> list[T]:
    """The rewrites a compile test over many kernels checks: the applier's first `first` (its
    hand-picked variants) and its grid's middle and last point. The whole grids are compiled by
    `tests/unit/search/test_structural_grids.py` and checked on the GPU on a fixed set of kernels
    by `tests/gpu/test_structural_grids_gpu.py` (the other GPU tests sample with `first` = 2,
    `applier_results.gpu_sample`); with every point of every red-team kernel, the nvcc tests alone
    would take most of CI's time."""
    if len(rewrites) <= first + 2:
        return rewrites
    return [*rewrites[:first], rewrites[len(rewrites) // 2], rewrites[-1]]
