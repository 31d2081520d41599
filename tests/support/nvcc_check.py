"""Compile-only check of rewritten sources with the real nvcc (tests marked `nvcc`).

nvcc's fixed cost (preprocessing and parsing `<cub/cub.cuh>`, ~3-5 s of CPU on the 2-core VM) is
most of a small kernel's compile, so `compile_together` checks many sources in few nvcc runs
without changing what passes: each source is checked as if compiled alone (see its docstring).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")


def _ptxas_flags(spills_allowed: bool, strict: bool, verbose: bool) -> list[str]:
    flags = ["-v"] if verbose else []
    if strict:
        flags.append("--warning-as-error" if spills_allowed else "--warn-on-spills,--warning-as-error")
    return ["-Xptxas", ",".join(flags)] if flags else []


def run_nvcc(source: str, where: Path, name: str, spills_allowed: bool = False,
             strict: bool = True, verbose: bool = False) -> subprocess.CompletedProcess[str]:
    """nvcc -cubin for sm_90 of `source` written to `where/name.cu`; `strict`: ptxas warnings
    are errors (register spills among them unless `spills_allowed`); `verbose`: ptxas reports
    each kernel's registers and stack frame on stderr."""
    path = where / f"{name}.cu"
    path.write_text(source)
    return subprocess.run(["nvcc", "-arch=sm_90", "-cubin", *_ptxas_flags(spills_allowed, strict, verbose),
                           "-o", str(where / f"{name}.cubin"), str(path)], capture_output=True, text=True, check=False)


def compile_ok(source: str, where: Path, name: str = "k", spills_allowed: bool = False) -> None:
    """`spills_allowed`: for grids whose points declare `__launch_bounds__(block)`, where the
    compiler spills rather than exceed a large block's registers (and the launch fail)."""
    done = run_nvcc(source, where, name, spills_allowed)
    assert done.returncode == 0, f"{source}\n{done.stderr}"


@dataclass(frozen=True)
class _Split:
    includes: tuple[str, ...]  # the source's `#include` lines, in order (all at its head)
    body: str  # the rest, then an `#undef` of each macro it defines


CONDITIONALS = ("if", "ifdef", "ifndef", "elif", "else", "endif")


def _split(source: str) -> _Split | None:
    """The source as its head of `#include`s and a body, when it can share a translation unit
    with others of the same includes and mean what it means alone: its `#include`s all come before
    any code, its macros are undefined after it (they cannot reach a neighbour), and nothing has C
    linkage (an `extern "C"` name would clash with a neighbour's). None for a source with an
    include after code, an `#undef` (it could reach a neighbour's view of a header's macro), or
    another directive than those and `#pragma`."""
    includes: list[str] = []
    body: list[str] = []
    macros: list[str] = []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            directive = stripped[1:].lstrip()
            keyword = directive.split(None, 1)[0] if directive else ""
            if keyword == "include":
                if any(b.strip() and not b.strip().startswith("//") for b in body):
                    return None  # an include after code: the code above it must not see it
                includes.append(stripped)
                continue
            if keyword == "define":
                name = directive[len("define"):].strip()
                end = 0
                while end < len(name) and (name[end].isalnum() or name[end] == "_"):
                    end += 1
                if end == 0:
                    return None
                macros.append(name[:end])
            elif keyword not in ("pragma", *CONDITIONALS):
                return None
        body.append(line)
    if 'extern "C"' in source:
        return None
    undefs = [f"#undef {name}" for name in dict.fromkeys(macros)]
    return _Split(tuple(includes), "\n".join([*body, *undefs]))


def compile_together(sources: list[str], where: Path, name: str = "all", spills_allowed: bool = False,
                     strict: bool = True, labels: list[str] | None = None, verbose: bool = False) -> list[str]:
    """Every source compiles with nvcc as if alone, in as few nvcc runs as that allows.

    Sources with the same `#include` head (see `_split`) share one translation unit, each in a
    namespace of its own after the includes they all start with, its macros undefined after it:
    each sees what it would see alone, and none sees another's names or macros. A source that
    could not (C linkage, an include after code, `#undef`) is compiled alone. When a shared unit fails,
    its sources are compiled one by one and the failure names the source that fails alone: a
    clash between neighbours (two `__constant__` tables over the limit, say) fails no test, and
    no source passes for being beside another. `strict` and `spills_allowed` as for `run_nvcc`;
    `labels` (one a source) name the sources that fail. Returns the stderr of the runs that
    passed (with `verbose`, ptxas's report of each distinct source's kernels exactly once)."""
    label_of = dict(zip(sources, labels or [f"source {n}" for n in range(len(sources))], strict=True))
    groups: dict[tuple[str, ...], list[str]] = {}
    alone: list[str] = []
    for source in label_of:  # identical texts once
        split = _split(source)
        if split is None:
            alone.append(source)
        else:
            groups.setdefault(split.includes, []).append(source)
    failures: list[str] = []
    reports: list[str] = []
    for number, (includes, members) in enumerate(groups.items()):
        if len(members) == 1:
            alone.extend(members)
            continue
        parts = [*includes]
        for index, source in enumerate(members):
            split = _split(source)
            assert split is not None
            parts.append(f"namespace variant{index} {{\n{split.body}\n}}")
        shared = run_nvcc("\n".join(parts), where, f"{name}_{number}", spills_allowed, strict, verbose)
        if shared.returncode == 0:
            reports.append(shared.stderr)
        else:
            alone.extend(members)  # find the source that fails on its own
    for index, source in enumerate(alone):
        done = run_nvcc(source, where, f"{name}_alone{index}", spills_allowed, strict, verbose)
        if done.returncode != 0:
            failures.append(f"{label_of[source]}:\n{source}\n{done.stderr[-4000:]}")
        else:
            reports.append(done.stderr)
    assert not failures, f"{len(failures)} of {len(sources)} sources do not compile:\n" + "\n\n".join(failures)
    return reports


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
