"""Privatised histograms with 64-bit counters (issue 26): `size_t`, `uint64_t` and `unsigned long
long` counts, the first two added through `unsigned long long` (`atomicAdd((unsigned long long
*)&counts[b], 1ULL)`, the only 64-bit `atomicAdd`). Three spellings (corpus train
hist_size_t_bytes: a cast of `&counts[b]` on byte data; hist_u64_mod_bins: `unsigned long long`
bins in a grid-stride loop; hist_uint64_float_bins: `uint64_t` counts addressed as `hist + bin`)
and three near-misses: a cast that widens 32-bit counts, a cast to another type, a signed 64-bit
counter cast to unsigned. The shared copies keep the counters' own type and every atomic on them
and on the global counts goes through the same cast. The GPU check: tests/gpu/test_gpu_appliers.py
does not cover PrivatisedHistogram; bench/verify_appliers.py on these tasks does (see the report)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import ApplierInput, DeviceLimits, rewrites_of
from regrapht.search.appliers.histogram import PrivatisedHistogram
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[3]
TRAIN = ROOT / "bench/corpus/train"
H200 = DeviceLimits(132, 2048, 1024, 48 * 1024)
SPELLINGS = {"hist_size_t_bytes": "size_t", "hist_u64_mod_bins": "unsigned long long",
             "hist_uint64_float_bins": "uint64_t"}
NEAR = """
__global__ void widened(const unsigned char *d, unsigned int *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd((unsigned long long *)&c[d[i] >> 4], 1ULL);
}
__global__ void other_type(const unsigned char *d, size_t *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd((unsigned int *)&c[d[i] >> 4], 1u);
}
__global__ void signed_counts(const unsigned char *d, long long *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd((unsigned long long *)&c[d[i] >> 4], 1ULL);
}
"""


def given_for(task: str, device: DeviceLimits | None = H200) -> ApplierInput:
    [kernel] = load_spec(TRAIN / task / f"{task}.regrapht.toml").kernels
    target = kernel_target(kernel)
    return ApplierInput((TRAIN / task / f"{task}.cu").read_text(), kernel.name, target.launch, target.constants, device)


@pytest.mark.parametrize("task", sorted(SPELLINGS))
def test_each_spelling_is_privatised_with_its_counter_type(task: str) -> None:
    element = SPELLINGS[task]
    rewrites = rewrites_of(PrivatisedHistogram(), given_for(task))
    assert len(rewrites) > 10
    for rewrite in rewrites:
        assert f"__shared__ {element} " in rewrite.source
        if element != "unsigned long long":
            # no atomicAdd of size_t / uint64_t exists: every one goes through unsigned long long
            body = rewrite.source.split("{", 1)[1]
            calls = body.count("atomicAdd(")
            assert calls == body.count("atomicAdd((unsigned long long"), task  # `... long long int *` too


@pytest.mark.parametrize("kernel", ["widened", "other_type", "signed_counts"])
def test_near_misses_are_left_alone(kernel: str) -> None:
    given = ApplierInput(NEAR, kernel, LaunchConfig(("(n + 255) / 256",), ("256",)), {"c": 16}, H200)
    assert rewrites_of(PrivatisedHistogram(), given) == []


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_the_rewrites_compile(tmp_path: Path) -> None:
    parts = []
    for task in sorted(SPELLINGS):
        for device in (H200, None):
            for index, rewrite in enumerate(rewrites_of(PrivatisedHistogram(), given_for(task, device))):
                parts.append(f"namespace {task}_{device is None}_{index} {{\n{rewrite.source}\n}}")
    path = tmp_path / "wide.cu"
    path.write_text("#include <cstddef>\n#include <cstdint>\n" + "\n".join(parts))
    done = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-o", str(tmp_path / "out.cubin"), str(path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
