"""VectorizedMap on the elementwise idiom (and GridStrideLoop on one-coordinate point kernels): maps written differently (templates with `T(1)`,
`long long` indices, in-place updates, 2-D gathers through a loaded row) move 16-byte vectors
with a run-time alignment check; near-misses (conditional stores, strided or shifted reads,
scatters, reductions) do not; every rewrite compiles with nvcc."""

from __future__ import annotations

from pathlib import Path

import pytest
from nvcc_check import compile_ok, compile_together, needs_nvcc

from regrapht.search.appliers import ApplierInput
from regrapht.search.appliers.launch import GridStrideLoop
from regrapht.search.appliers.vectorize import VectorizedMap
from regrapht.spec.launch import LaunchConfig

LAUNCH = LaunchConfig(("(n + 255) / 256",), ("256",))

MATCHES = {
    "template_swish": ("""
template <typename T>
__global__ void swish(const T *x, T *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T v = x[i];
        y[i] = v / (T(1) + exp(-v));
    }
}
template __global__ void swish<float>(const float *, float *, int);
""", "swish<float>", LAUNCH, "x, y"),
    "double_long_index": ("""
__global__ void softplus(const double *in, double *out, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = log(1.0 + exp(in[i]));
}
""", "softplus", LAUNCH, "in, out"),
    "in_place_axpy": ("""
__global__ void axpy_inplace(float a, const float *x, float *y, unsigned int n) {
    unsigned int k = threadIdx.x + blockDim.x * blockIdx.x;
    if (k < n) y[k] = a * x[k] + y[k];
}
""", "axpy_inplace", LaunchConfig(("(n + 127) / 128",), ("128",)), "x, y"),
    "row_gather": ("""
__global__ void gather_rows(const float *table, const int *rows, float *out, int count, int width) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < count && c < width)
        out[r * width + c] = table[rows[r] * width + c];
}
""", "gather_rows", LaunchConfig(("(width + 31) / 32", "(count + 7) / 8"), ("32", "8")), "out, table"),
}

NEAR_MISSES = {
    "conditional_store": """
__global__ void relu_sparse(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { if (x[i] > 0.0f) y[i] = x[i]; }
}
""",
    "strided_read": """
__global__ void decimate(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[2 * i];
}
""",
    "shifted_reads": """
__global__ void diff(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i + 1] - x[i];
}
""",
    "scatter": """
__global__ void scatter(const float *x, const int *to, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[to[i]] = x[i];
}
""",
    "reduction_atomic": """
__global__ void total(const float *x, float *sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, x[i]);
}
""",
    "early_return_in_work": """
__global__ void clip(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { if (x[i] != x[i]) return; y[i] = x[i]; }
}
""",
}


def _name(source: str) -> str:
    return source.split("void ", 1)[1].split("(", 1)[0].strip()


def _rewrites(case: str) -> list:
    source, name, launch, _ = MATCHES[case]
    return VectorizedMap().apply(ApplierInput(source, name, launch))


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_vectorizes_maps_written_differently(case: str) -> None:
    rewrites = _rewrites(case)
    assert rewrites and rewrites[0].note.endswith(MATCHES[case][3])
    assert "__align__(4 * sizeof(" in rewrites[0].source and "} else {" in rewrites[0].source


def test_grid_shrinks_along_x_only() -> None:
    rewrites = _rewrites("row_gather")
    assert rewrites[0].launch.grid == ("(width + 127) / 128", "(count + 7) / 8")
    # a 2-D block keeps its shape: the grid varies points per thread and vector width only
    assert {r.launch.block for r in rewrites} == {rewrites[0].launch.block}
    assert {r.launch.grid[1] for r in rewrites} == {"(count + 7) / 8"}
    in_place = _rewrites("in_place_axpy")
    assert [r.launch.block for r in in_place[:2]] == [("128",), ("256",)]


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_leaves_near_misses_alone(case: str) -> None:
    source = NEAR_MISSES[case]
    assert VectorizedMap().apply(ApplierInput(source, _name(source), LAUNCH)) == []


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_compile(case: str, tmp_path: Path) -> None:
    compile_together([r.source for r in _rewrites(case)], tmp_path)


GRID_STRIDE_MATCHES = {
    "map": MATCHES["double_long_index"][0],
    "histogram": """
__global__ void hist(const unsigned char *d, unsigned int *bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[d[i]], 1u);
}
""",
    "unsigned_with_locals": """
__global__ void poly(const float *x, float *y, unsigned n) {
    unsigned i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= n) return;
    float v = x[i], acc = v * v;
    y[i] = acc * v + 1.0f;
}
""",
}
GRID_STRIDE_NEAR_MISSES = {
    "row_loop_per_point": """
__global__ void row_sum(const float *a, float *s, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float acc = 0.0f;
        for (int c = 0; c < cols; c++) acc += a[r * cols + c];
        s[r] = acc;
    }
}
""",
    "two_dimensional": MATCHES["row_gather"][0],
    "barrier": """
__global__ void staged(const float *x, float *y, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { s[threadIdx.x] = x[i]; __syncthreads(); y[i] = s[255 - threadIdx.x]; }
}
""",
    "uses_block_index": """
__global__ void tag(float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (float)blockIdx.x;
}
""",
}


@pytest.mark.parametrize("case", sorted(GRID_STRIDE_MATCHES))
def test_grid_stride_loops_over_point_kernels(case: str, tmp_path: Path) -> None:
    source = GRID_STRIDE_MATCHES[case]
    rewrites = GridStrideLoop().apply(ApplierInput(source, _name(source), LAUNCH))
    assert rewrites and "+= (long long)blockDim.x * gridDim.x" in rewrites[0].source


@pytest.mark.parametrize("case", sorted(GRID_STRIDE_NEAR_MISSES))
def test_grid_stride_leaves_near_misses_alone(case: str) -> None:
    source = GRID_STRIDE_NEAR_MISSES[case]
    launch = MATCHES["row_gather"][2] if case == "two_dimensional" else LAUNCH
    assert GridStrideLoop().apply(ApplierInput(source, _name(source), launch)) == []


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("case", sorted(GRID_STRIDE_MATCHES))
def test_grid_stride_rewrites_compile(case: str, tmp_path: Path) -> None:
    source = GRID_STRIDE_MATCHES[case]
    for index, rewrite in enumerate(GridStrideLoop().apply(ApplierInput(source, _name(source), LAUNCH))):
        compile_ok(rewrite.source, tmp_path, f"v{index}")
