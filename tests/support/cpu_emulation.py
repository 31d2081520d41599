"""Run a CUDA kernel on the CPU, thread after thread, under AddressSanitizer (skips without g++).

For rewrites whose threads never wait for each other (no `__syncthreads`, no shared memory, no
warp intrinsics): the kernel's source is compiled as C++ by g++ with `blockIdx`/`threadIdx`
as globals and `__ldg` as a plain load, every thread of the launch runs in turn, and each
buffer is a heap array of exactly its size, so a load the original kernel would never make
past an edge is an AddressSanitizer error. FP contraction is off: an original and a rewrite
that do the same operations in the same order give bit-identical results. Without a GPU this
is how the tests show that a register-window or jammed rewrite computes what the kernel does.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
from cpu_cuda import without_includes

from regrapht.search.appliers.common import Rewrite
from regrapht.search.source import find_kernel
from regrapht.spec.launch import LaunchConfig

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not on PATH")

RUNTIME = """#pragma once
#include <algorithm>
#include <cmath>
#include <cstdlib>
struct emu_dim3 { unsigned x = 1, y = 1, z = 1; };
static emu_dim3 threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
template <class T> static inline T __ldg(const T *p) { return *p; }
using std::abs; using std::max; using std::min;
"""


def _size(expression: str, scalars: Mapping[str, float | int]) -> int:
    """A launch expression's value (C integer division)."""
    return int(eval(expression.replace("/", "//"), {"__builtins__": {}, "min": min, "max": max}, dict(scalars)))


def _base_type(ctype: str) -> str:
    return ctype.replace("const", "").replace("__restrict__", "").replace("*", "").strip()


def run_on_cpu(variants: list[tuple[str, tuple[str, ...], tuple[str, ...]]], kernel: str,
               params: list[tuple[str, str, bool]], scalars: Mapping[str, float | int],
               arrays: Mapping[str, np.ndarray], where: Path) -> list[dict[str, np.ndarray]]:
    """Every buffer after one launch of each variant (source, grid, block), all in one program
    (one AddressSanitizer build: most of a variant's cost), each variant in a namespace of its own
    on fresh copies of `arrays`. `params`: (name, C type, is pointer) in order."""
    where.mkdir(parents=True, exist_ok=True)
    (where / "include").mkdir(exist_ok=True)
    (where / "include" / "cuda_runtime.h").write_text(RUNTIME)
    lines = ["#include <cstdio>", "#include <cuda_runtime.h>"]
    for index, (source, _grid, _block) in enumerate(variants):
        # the variant's own #defines stay in effect for the next ones, which define theirs again
        lines += [f"namespace variant{index} {{", without_includes(source), "}"]
    lines.append("int main() {")
    for name, _ctype, pointer in params:
        if pointer:
            (where / f"{name}.in").write_bytes(arrays[name].tobytes())
    for index, (_source, grid, block) in enumerate(variants):
        sizes = [_size(g, scalars) for g in grid] + [1] * (3 - len(grid))
        threads = [int(b) for b in block] + [1] * (3 - len(block))
        arguments = []
        lines.append("  {")
        for name, ctype, pointer in params:
            base = _base_type(ctype)
            if pointer:
                count = arrays[name].size
                lines.append(f'  {base} *{name}_buf = new {base}[{count}]; {{ FILE *f = fopen("{where / name}.in", "rb"); '
                             f"if (fread({name}_buf, sizeof({base}), {count}, f) != {count}) return 3; fclose(f); }}")
                arguments.append(f"{name}_buf")
            else:
                arguments.append(f"({base})({scalars[name]})")
        lines += [f"  gridDim.x = {sizes[0]}; gridDim.y = {sizes[1]}; gridDim.z = {sizes[2]};",
                  f"  blockDim.x = {threads[0]}; blockDim.y = {threads[1]}; blockDim.z = {threads[2]};",
                  "  for (unsigned bz = 0; bz < gridDim.z; ++bz) for (unsigned by = 0; by < gridDim.y; ++by)",
                  "  for (unsigned bx = 0; bx < gridDim.x; ++bx) for (unsigned tz = 0; tz < blockDim.z; ++tz)",
                  "  for (unsigned ty = 0; ty < blockDim.y; ++ty) for (unsigned tx = 0; tx < blockDim.x; ++tx) {",
                  "    blockIdx.x = bx; blockIdx.y = by; blockIdx.z = bz; threadIdx.x = tx; threadIdx.y = ty; threadIdx.z = tz;",
                  f"    variant{index}::{kernel}({', '.join(arguments)});",
                  "  }"]
        for name, ctype, pointer in params:
            if pointer:
                lines.append(f'  {{ FILE *f = fopen("{where / name}.{index}.out", "wb"); '
                             f"fwrite({name}_buf, sizeof({_base_type(ctype)}), {arrays[name].size}, f); fclose(f); "
                             f"delete[] {name}_buf; }}")
        lines.append("  }")
    lines.append("  return 0;\n}")
    (where / "run.cpp").write_text("\n".join(lines))
    # -O0: a quarter of -O1's build time for these many-variant programs; the same IEEE operations
    # in the same order either way (no contraction), and AddressSanitizer checks every access
    built = subprocess.run(["g++", "-O0", "-g", "-fsanitize=address", "-w", "-ffp-contract=off",
                            f"-I{where / 'include'}", "-o", str(where / "run"), str(where / "run.cpp")],
                           capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(where / "run")], capture_output=True, text=True, check=False,
                         env={"ASAN_OPTIONS": "detect_leaks=0"})
    assert ran.returncode == 0, ran.stderr[-4000:]
    return [{name: np.frombuffer((where / f"{name}.{index}.out").read_bytes(), dtype=a.dtype).reshape(a.shape)
             for name, a in arrays.items()} for index in range(len(variants))]


def inputs(params: list[tuple[str, str, bool]], counts: Mapping[str, int], seed: int = 7) -> dict[str, np.ndarray]:
    """Random buffers of the parameters' element types (0/1 for bytes, small integers for ints)."""
    rng = np.random.default_rng(seed)
    types = {"float": np.float32, "double": np.float64, "int": np.int32, "unsigned char": np.uint8,
             "unsigned int": np.uint32, "unsigned": np.uint32}
    out = {}
    for name, ctype, pointer in params:
        if not pointer:
            continue
        dtype = np.dtype(types[_base_type(ctype)])
        count = counts[name]
        if dtype.kind == "f":
            out[name] = rng.uniform(-1, 1, count).astype(dtype)
        elif dtype.itemsize == 1:
            out[name] = rng.integers(0, 2, count).astype(dtype)
        else:
            out[name] = rng.integers(-100, 100, count).astype(dtype)
    return out


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def assert_rewrites_match(source: str, kernel: str, launch: LaunchConfig, rewrites: list[Rewrite],
                          scalars: Mapping[str, float | int], counts: Mapping[str, int], where: Path) -> None:
    """Every rewrite gives the original's bits on the same random inputs, loading nothing new."""
    found = find_kernel(source, kernel)
    assert found is not None
    params = [(p.name, p.type, p.is_pointer) for p in found.params]
    given = inputs(params, counts)
    assert rewrites
    variants = [(source, launch.grid, launch.block)] + [(r.source, r.launch.grid, r.launch.block) for r in rewrites]
    want, *got = run_on_cpu(variants, kernel, params, scalars, given, where)
    for rewrite, outputs in zip(rewrites, got, strict=True):
        assert all(same_bits(outputs[name], want[name]) for name in want), rewrite.note
