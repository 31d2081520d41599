"""PrivatisedHistogram on the histogram idiom: byte, shifted-key and clamped-float histograms are
privatised in shared memory with grids from the device; reductions, histograms whose counts are
also read, unknown or too many bins, extra stores and early returns in the work are not; every
rewrite compiles with nvcc."""

from __future__ import annotations

from pathlib import Path

import pytest
from nvcc_check import compile_together, needs_nvcc

from regrapht.search.appliers import ApplierInput, DeviceLimits
from regrapht.search.appliers.histogram import PrivatisedHistogram
from regrapht.spec.launch import LaunchConfig

LAUNCH = LaunchConfig(("(n + 255) / 256",), ("256",))
DEVICE = DeviceLimits(sms=100, max_threads_per_sm=1536, max_threads_per_block=1024, shared_bytes_per_block=48 * 1024)

MATCHES = {
    "bytes": ("""
__global__ void count_bytes(const unsigned char *text, unsigned int *freq, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= n) return;
    atomicAdd(&freq[text[i]], 1u);
}
""", {"freq": 256}, "uint4"),
    "top_bits_pointer_form": ("""
__global__ void top12(const unsigned int *keys, unsigned int *bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(bins + (keys[i] >> 20), 1u);
}
""", {"bins": 4096}, "private histogram (4096 bins)"),
    "clamped_float_bins": ("""
__global__ void hist_f(const float *x, int *h, int n, int nb) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int b = (int)(x[i] * nb);
        b = min(max(b, 0), nb - 1);
        atomicAdd(&h[b], 1);
    }
}
""", {"h": 64, "nb": 64}, "per-warp shared histograms (64 bins)"),
}

NEAR_MISSES = {
    "reduction": ("""
__global__ void total(const float *x, float *sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, x[i]);
}
""", {"sum": 1}),
    "counts_also_read": ("""
__global__ void capped(const unsigned char *d, unsigned int *bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && bins[d[i]] < 1000u) atomicAdd(&bins[d[i]], 1u);
}
""", {"bins": 256}),
    "unknown_bin_count": ("""
__global__ void hist(const unsigned char *d, unsigned int *bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[d[i]], 1u);
}
""", {}),
    "too_many_bins": ("""
__global__ void scatter_count(const int *idx, unsigned int *bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[idx[i]], 1u);
}
""", {"bins": 1 << 20}),
    "extra_store": ("""
__global__ void hist_and_copy(const unsigned char *d, unsigned int *bins, unsigned char *copy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { copy[i] = d[i]; atomicAdd(&bins[d[i]], 1u); }
}
""", {"bins": 256}),
    "early_return_in_work": ("""
__global__ void hist_skip(const unsigned char *d, unsigned int *bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { if (d[i] == 0) return; atomicAdd(&bins[d[i]], 1u); }
}
""", {"bins": 256}),
}


def _name(source: str) -> str:
    return source.split("void ", 1)[1].split("(", 1)[0].strip()


def _rewrites(case: str, device: DeviceLimits | None = DEVICE) -> list:
    source, constants, _ = MATCHES[case]
    return PrivatisedHistogram().apply(ApplierInput(source, _name(source), LAUNCH, constants, device))


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_privatises_histograms_written_differently(case: str) -> None:
    rewrites = _rewrites(case)
    expected = MATCHES[case][2]
    assert any(expected in r.source or expected in r.note for r in rewrites)
    assert all("__syncthreads();" in r.source for r in rewrites)


def test_batches_the_loads_of_several_points_before_their_atomics() -> None:
    notes = [r.note for r in _rewrites("clamped_float_bins")]
    assert notes[0] == "per-warp shared histograms (64 bins), 4 points per thread in flight"
    batched = _rewrites("clamped_float_bins")[0].source
    # four copies of the bin computation, then four shared atomics, in that order
    assert batched.count("(int)(x[i] * nb)") == 4
    assert batched.index("atomicAdd(&mine_rg[key0_rg]") > batched.rindex("(int)(x[i] * nb)")


def test_grids_come_from_the_device() -> None:
    # 100 SMs x (1536 / 256) resident blocks: nothing of one GPU's numbers in the rewrite
    launches = {r.launch.grid for r in _rewrites("top_bits_pointer_form")}
    assert ("min((n + 255) / 256, 600)",) in launches
    without = {r.launch.grid for r in _rewrites("top_bits_pointer_form", None)}
    assert ("(n + 4095) / 4096",) in without


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_leaves_near_misses_alone(case: str) -> None:
    source, constants = NEAR_MISSES[case]
    assert PrivatisedHistogram().apply(ApplierInput(source, _name(source), LAUNCH, constants, DEVICE)) == []


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_compile(case: str, tmp_path: Path) -> None:
    compile_together([r.source for r in _rewrites(case)], tmp_path)
