"""Precision on expert idioms (issue 14): each pattern below was a false positive on real expert
CUDA (ggml-cuda), or is its true counterpart; the rules decide from facts of the source model."""

from __future__ import annotations

from regrapht.rules import analyze_text


def found(text: str, rule: str) -> list[tuple[str, int]]:
    """(severity, 1-based line) of `rule`'s findings."""
    return [(f.severity, f.span.start.line + 1) for f in analyze_text(text) if f.rule == rule]


def test_r008_float_argument_is_the_float_overload() -> None:
    text = """__global__ void k(float *y, int n) {
    int i = threadIdx.x;
    float x = y[i];
    y[i] = sqrt(x) + round(y[i]) + exp(x * 2.0f);
    y[i] += sqrt(n);
}"""
    assert found(text, "R008") == [("warning", 5)]


def test_r008_template_argument_is_left_alone() -> None:
    text = "template <typename T> __global__ void k(T *y) { y[threadIdx.x] = sqrt(y[threadIdx.x]); }"
    assert found(text, "R008") == []


def test_r007_conversions_are_silent_and_chains_warn() -> None:
    text = """template <typename T> __global__ void k(float *y, int kh, int kw) {
    int i = threadIdx.x;
    float theta = 0.0;
    float half = T(4.0);
    if (y[i] > 0.5) { y[i] = theta + half; }
    y[i] = y[i] * 0.5;
    y[i] = 0.5 * y[i] + 0.5 * y[i];
    float scale = 1. / (kh * kw);
    y[i] *= scale;
}"""
    # One finding per line: the two literals of line 7 are one finding (the other is related), a
    # warning: nvcc keeps `0.5 * a + 0.5 * b` in f64 (tests/unit/rules/test_confirm_nvcc.py).
    assert found(text, "R007") == [("hint", 6), ("warning", 7), ("warning", 8)]


def test_r007_inexact_literals_warn_exact_scalings_are_hints() -> None:
    text = """__global__ void k(float *y, float a) {
    int i = threadIdx.x;
    y[i] = a * y[i] + y[i] * 1.0;
    y[i] = y[i] * 0.1;
    y[i] = 0.5 * a * (1.0f + a * (a + 0.044715 * a * a));
    y[i] = y[i] + 1.5;
}"""
    # Line 5 holds an exact scaling (a hint) and an inexact chain literal: one warning for the line.
    assert found(text, "R007") == [("hint", 3), ("warning", 4), ("warning", 5), ("hint", 6)]


def test_r012_loop_whose_thread_index_cancels_is_uniform() -> None:
    text = """__global__ void wkv(const float *r, float *dst, int base, int end, int C) {
    __shared__ float s[64];
    int tid = threadIdx.x;
    for (int t = base + tid; t < end + tid; t += C) {
        __syncthreads();
        s[tid] = r[t];
        __syncthreads();
        dst[t] = s[63 - tid];
    }
}"""
    assert found(text, "R012") == []


def test_r012_loop_bounded_per_thread_is_divergent() -> None:
    text = """__global__ void k(const float *r, float *dst, const int *count) {
    __shared__ float s[64];
    for (int t = threadIdx.x; t < count[threadIdx.x]; t += 64) {
        s[threadIdx.x] = r[t];
        __syncthreads();
    }
}"""
    assert found(text, "R012") == [("error", 5)]


def test_r012_after_early_return_is_a_hint() -> None:
    text = """__global__ void k(const float *a, float *b, int n) {
    __shared__ float s[256];
    if (threadIdx.y >= n) return;
    s[threadIdx.x] = a[threadIdx.x];
    __syncthreads();
    b[threadIdx.x] = s[255 - threadIdx.x];
}"""
    assert found(text, "R012") == [("hint", 5)]


def test_r004_leader_lane_after_group_reduction() -> None:
    text = """#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(const float *x, float *sum, int n) {
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    float v = x[blockIdx.x * blockDim.x + threadIdx.x];
    v = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) atomicAdd(sum, v);
}
__device__ void flush(float *sum, float v, int lane) { if (lane == 0) atomicAdd(sum, v); }"""
    assert found(text, "R004") == []


def test_r001_shared_tile_through_a_device_function_pointer() -> None:
    text = """__device__ float dot(const int *x, const int *y, int k0) {
    const int i = threadIdx.x;
    return x[i * 33 + k0] * y[k0];
}"""
    assert found(text, "R001") == []


def test_r001_vector_width_covers_the_stride() -> None:
    text = """__global__ void k(const float *y, float2 *out, int col0) {
    const int col = col0 + threadIdx.x;
    float2 v = *(const float2 *) &y[2 * col];
    out[col] = v;
}"""
    assert found(text, "R001") == []


def test_r001_stride_parameter_is_a_hint_extent_is_a_warning() -> None:
    text = """__global__ void k(const float *src, float *dst, int s00, int rows) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    dst[i] = src[i * s00];
    dst[i * rows] = src[i];
    dst[i * rows + 1] = src[i];
}"""
    assert found(text, "R001") == [("hint", 3), ("warning", 4)]  # one finding per array and stride


def test_r001_launch_with_one_thread_wide_blocks() -> None:
    text = """__global__ void mask(const float *x, float *dst, int ncols) {
    const int col = blockDim.y * blockIdx.y + threadIdx.y;
    const int row = blockDim.x * blockIdx.x + threadIdx.x;
    dst[row * ncols + col] = x[row * ncols + col];
}
void launch(const float *x, float *dst, int rows, int ncols) {
    const dim3 block(1, 256, 1);
    const dim3 grid(rows, (ncols + 255) / 256, 1);
    mask<<<grid, block>>>(x, dst, ncols);
}"""
    assert found(text, "R001") == []


def test_r002_one_finding_per_loop_and_short_chunks_are_hints() -> None:
    text = """__global__ void k(const float *a, float *b, int N) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < N; k++) { s += a[row * N + k] * b[row * N + k]; }
    for (int i0 = 2 * threadIdx.x; i0 < N; i0 += 2 * blockDim.x) { b[i0] = a[i0]; b[i0 + 1] = a[i0 + 1]; }
#pragma unroll
    for (int j = 0; j < 4; ++j) { b[row * 4 + j] = s; }
}"""
    assert found(text, "R002") == [("warning", 4), ("hint", 7)]


def test_r009_one_thread_helper_and_a_warp_per_block() -> None:
    text = """__global__ void divide(float *r, int n) { *r /= n; }
__global__ void fill(float *y) { y[blockIdx.x * blockDim.x + threadIdx.x] = 0.0f; }
void run(float *r, float *y) {
    divide<<<1, 1>>>(r, 4);
    fill<<<64, 32>>>(y);
    fill<<<64, 100>>>(y);
}"""
    assert found(text, "R009") == [("hint", 5), ("warning", 6)]


def test_r010_ternary_and_guard_without_else() -> None:
    text = """__global__ void k(float *y, float *d) {
    int t = threadIdx.x;
    y[t] = t % 2 ? y[t] : -y[t];
    if (t % 8 == 0) { d[t / 8] = y[t]; }
    if (t % 2 == 0) { y[t] *= 2.0f; y[t] += 1.0f; } else { y[t] -= 1.0f; }
    if (t % 4 == 0) { d[t] = y[t]; d[t + 1] = y[t]; }
}"""
    assert found(text, "R010") == [("warning", 5), ("hint", 6)]


def test_r013_non_blocking_calls_and_device_loops() -> None:
    text = """void run(float **d, float *h, float *a, float *b, int n, int steps, int n_devices) {
    for (int s = 0; s < steps; ++s) {
        cudaMemset(a, 0, n);
        cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice);
        cudaMemcpy(h, a, n, cudaMemcpyDeviceToHost);
    }
    for (int dev = 0; dev < n_devices; ++dev) {
        cudaSetDevice(dev);
        cudaMalloc(&d[dev], n);
        cudaDeviceSynchronize();
    }
}"""
    assert found(text, "R013") == [("warning", 5)]
