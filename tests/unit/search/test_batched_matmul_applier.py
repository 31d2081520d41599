"""BatchedSmallMatmul on the batched-product idiom: batched GEMMs whose threads are mapped in
different ways (block per matrix with threadIdx as (row, col), a flat id divided by M*N, a
grid-stride batch loop, a 1-D block split by `%`, a thread per matrix or per row looping over
the rest, pointers advanced to the matrix, `#pragma unroll`), fixed (template, #define) or runtime sizes,
float and double, transposed operands, alpha/beta, get groups of matrices staged in shared
memory; near-misses (a data-dependent k bound, an output aliasing an operand, a non-affine
index, a launch axis no coordinate uses, a guard narrower than the matrix) do not; the variants
are a parameter grid (outputs per thread x passes) after the hand-picked blockings; every
rewrite compiles with nvcc without spills."""

from __future__ import annotations

from pathlib import Path

import pytest
from cpu_cuda import assert_same_outputs, needs_gxx, same_outputs, spec_text
from nvcc_check import compile_together, needs_nvcc

from regrapht.idioms.batched_gemm import batched_product
from regrapht.search.appliers import ApplierInput, DeviceLimits, rewrites_of
from regrapht.search.appliers.batched_matmul import BatchedSmallMatmul, _blockings
from regrapht.spec.launch import LaunchConfig

H200_LIKE = DeviceLimits(sms=132, max_threads_per_sm=2048, max_threads_per_block=1024, shared_bytes_per_block=48 * 1024)
SMALL_GPU = DeviceLimits(sms=20, max_threads_per_sm=1536, max_threads_per_block=1024, shared_bytes_per_block=48 * 1024)

MATCHES: dict[str, tuple[str, str, LaunchConfig, dict[str, int]]] = {
    "template_block_per_matrix": ("""
template <int D>
__global__ void bmm_tpl(const float *A, const float *B, float *C, int count) {
    int mat = blockIdx.x;
    int row = threadIdx.y, col = threadIdx.x;
    if (mat >= count) return;
    const float *a = A + mat * D * D;
    const float *b = B + mat * D * D;
    float acc = 0.f;
    for (int k = 0; k < D; ++k)
        acc += a[row * D + k] * b[k * D + col];
    C[mat * D * D + row * D + col] = acc;
}
template __global__ void bmm_tpl<16>(const float *, const float *, float *, int);
""", "bmm_tpl<16>", LaunchConfig(("count",), ("16", "16")), {"count": 65536}),
    "flat_id_double_alpha_beta_bt": ("""
__global__ void dbmm_flat(int batch, int M, int N, int K, double alpha, const double *A, const double *Bt,
                          double beta, double *C) {
    long t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= batch * M * N) return;
    int mat = t / (M * N);
    int rem = t % (M * N);
    int r = rem / N, c = rem % N;
    double s = 0.0;
    for (int p = 0; p < K; p++)
        s = fma(A[(mat * M + r) * K + p], Bt[(mat * N + c) * K + p], s);
    C[mat * M * N + r * N + c] = alpha * s + beta * C[mat * M * N + r * N + c];
}
""", "dbmm_flat", LaunchConfig(("(batch * M * N + 255) / 256",), ("256",)),
        {"batch": 2048, "M": 24, "N": 20, "K": 12}),
    "grid_stride_batch_define_at": ("""
#define SZ 8
__global__ void bmm_loop(const float *__restrict__ At, const float *__restrict__ B, float *__restrict__ C, int nb) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < SZ && j < SZ) {
        for (int b = blockIdx.z; b < nb; b += gridDim.z) {
            float sum = 0.0f;
            for (int k = 0; k < SZ; k++) sum = sum + At[b * SZ * SZ + k * SZ + i] * B[b * SZ * SZ + k * SZ + j];
            C[b * SZ * SZ + i * SZ + j] = sum;
        }
    }
}
""", "bmm_loop", LaunchConfig(("1", "1", "1024"), ("8", "8", "1")), {"nb": 65536}),
    "split_1d_block_runtime": ("""
__global__ void bmm_split(const float *x, const float *w, float *y, int n_mats, int rows, int cols, int inner) {
    unsigned int m = blockIdx.y;
    unsigned int i = threadIdx.x / cols;
    unsigned int j = threadIdx.x % cols;
    if (m < n_mats && i < rows) {
        float v = 0.0f;
        for (int q = 0; q < inner; ++q)
            v += x[(m * rows + i) * inner + q] * w[(m * inner + q) * cols + j];
        y[(m * rows + i) * cols + j] += v;
    }
}
""", "bmm_split", LaunchConfig(("1", "n_mats"), ("rows * cols",)), {"n_mats": 4096, "rows": 12, "cols": 12, "inner": 12}),
    "thread_per_matrix_loops": ("""
#define DIM 6
__global__ void bmm_per_thread(const float *A, const float *B, float *C, int nb) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb) {
        for (int i = 0; i < DIM; i++)
            for (int j = 0; j < DIM; j++) {
                float s = 0.0f;
                for (int k = 0; k < DIM; k++) s += A[b * DIM * DIM + i * DIM + k] * B[b * DIM * DIM + k * DIM + j];
                C[b * DIM * DIM + i * DIM + j] = s;
            }
    }
}
""", "bmm_per_thread", LaunchConfig(("(nb + 127) / 128",), ("128",)), {"nb": 100000}),
    "thread_per_row_double": ("""
__global__ void bmm_rows(const double *A, const double *B, double *C, int nb, int M, int N, int K) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int b = t / M, i = t % M;
    if (b >= nb) return;
    for (int j = 0; j < N; ++j) {
        double s = 0;
        for (int k = 0; k < K; ++k) s += A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
        C[(b * M + i) * N + j] = s;
    }
}
""", "bmm_rows", LaunchConfig(("(nb * M + 255) / 256",), ("256",)), {"M": 8, "N": 8, "K": 8}),
    "typename_pointer_advance_pragma": ("""
template <typename T, int S>
__global__ void bmm_adv(const T *A, const T *B, T *C, int nb) {
    const int b = blockIdx.x;
    const int i = threadIdx.x / S, j = threadIdx.x % S;
    A += b * S * S;
    B = B + b * S * S;
    C += (size_t)b * S * S;
    T acc = T(0);
#pragma unroll
    for (int k = 0; k < S; ++k) {
        acc += A[i * S + k] * B[k * S + j];
    }
    C[i * S + j] = acc;
}
template __global__ void bmm_adv<float, 8>(const float *, const float *, float *, int);
""", "bmm_adv<float, 8>", LaunchConfig(("nb",), ("64",)), {"nb": 50000}),
    "block_stride_over_outputs": ("""
__global__ void bmm_block_stride(const float *A, const float *B, float *C, int batch, int M, int N, int K) {
    int b = blockIdx.x;
    if (b >= batch) return;
    for (int e = threadIdx.x; e < M * N; e += blockDim.x) {
        int i = e / N, j = e % N;
        float s = 0.f;
        for (int k = 0; k < K; ++k) s += A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
        C[(b * M + i) * N + j] = s;
    }
}
""", "bmm_block_stride", LaunchConfig(("batch",), ("128",)), {"batch": 4096, "M": 12, "N": 20, "K": 9}),
    "raw_threadidx_launch_batch": ("""
__global__ void bmm_raw(const float *A, const float *B, float *C, int M, int N, int K) {
    float s = 0.0f;
    for (int k = 0; k < K; ++k)
        s += A[blockIdx.z * M * K + threadIdx.y * K + k] * B[blockIdx.z * K * N + k * N + threadIdx.x];
    C[blockIdx.z * M * N + threadIdx.y * N + threadIdx.x] = s;
}
""", "bmm_raw", LaunchConfig(("1", "1", "batch"), ("N", "M")),
        {"M": 16, "N": 16, "K": 16}),
    # float data, each product formed in the accumulator's type (a template's), rounded once
    "widened_products_template_acc": ("""
template <typename T, typename Acc>
__global__ void bmm_widen(const T *A, const T *B, T *C, int batch, int M, int N, int K) {
    int b = blockIdx.x, i = threadIdx.y, j = threadIdx.x;
    if (b >= batch) return;
    Acc s = 0;
    for (int k = 0; k < K; ++k)
        s += static_cast<Acc>(A[(b * M + i) * K + k]) * static_cast<Acc>(B[(b * K + k) * N + j]);
    C[(b * M + i) * N + j] = (T)s;
}
template __global__ void bmm_widen<float, double>(const float *, const float *, float *, int, int, int, int);
""", "bmm_widen<float, double>", LaunchConfig(("batch",), ("N", "M")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    # ... widened by double load locals, summed in float (each step rounds the double sum to float)
    "widened_load_locals_float_sum": ("""
__global__ void bmm_widen_locals(const float *A, const float *B, float *C, int batch, int M, int N, int K) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int b = t / (M * N), i = t / N % M, j = t % N;
    if (b >= batch) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        double a = A[(b * M + i) * K + k];
        double w = double(B[(b * K + k) * N + j]);
        acc += a * w;
    }
    C[(b * M + i) * N + j] = acc;
}
""", "bmm_widen_locals", LaunchConfig(("(batch * M * N + 255) / 256",), ("256",)),
        {"batch": 1024, "M": 16, "N": 16, "K": 16}),
}

NEAR_MISSES: dict[str, tuple[str, LaunchConfig, dict[str, int]]] = {
    # conversions that change the arithmetic: a rewrite forming the products otherwise rounds otherwise
    "narrowing_casts_of_double_data": ("""
__global__ void bmm_narrow(const double *A, const double *B, double *C, int batch, int M, int N, int K) {
    int b = blockIdx.x, i = threadIdx.y, j = threadIdx.x;
    if (b >= batch) return;
    double s = 0.0;
    for (int k = 0; k < K; ++k) s += (float)A[(b * M + i) * K + k] * (float)B[(b * K + k) * N + j];
    C[(b * M + i) * N + j] = s;
}
""", LaunchConfig(("batch",), ("N", "M")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "fmaf_rounds_a_double_accumulator": ("""
__global__ void bmm_fmaf_double(const float *A, const float *B, float *C, int batch, int M, int N, int K) {
    int b = blockIdx.x, i = threadIdx.y, j = threadIdx.x;
    if (b >= batch) return;
    double s = 0.0;
    for (int k = 0; k < K; ++k) s = fmaf(A[(b * M + i) * K + k], B[(b * K + k) * N + j], s);
    C[(b * M + i) * N + j] = (float)s;
}
""", LaunchConfig(("batch",), ("N", "M")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "fmaf_of_widened_factors": ("""
__global__ void bmm_fmaf_widened(const float *A, const float *B, float *C, int batch, int M, int N, int K) {
    int b = blockIdx.x, i = threadIdx.y, j = threadIdx.x;
    if (b >= batch) return;
    float s = 0.0f;
    for (int k = 0; k < K; ++k) s = fmaf((double)A[(b * M + i) * K + k], (double)B[(b * K + k) * N + j], s);
    C[(b * M + i) * N + j] = s;
}
""", LaunchConfig(("batch",), ("N", "M")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "factor_truncated_to_int": ("""
__global__ void bmm_trunc_factor(const float *A, const float *B, float *C, int batch, int M, int N, int K) {
    int b = blockIdx.x, i = threadIdx.y, j = threadIdx.x;
    if (b >= batch) return;
    float s = 0.0f;
    for (int k = 0; k < K; ++k) s += (int)A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
    C[(b * M + i) * N + j] = s;
}
""", LaunchConfig(("batch",), ("N", "M")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "data_dependent_k": ("""
__global__ void bmm_ragged(const float *A, const float *B, const int *len, float *C, int nmat) {
    int mat = blockIdx.x, row = threadIdx.y, col = threadIdx.x;
    if (mat >= nmat) return;
    float acc = 0.f;
    for (int k = 0; k < len[mat]; ++k) acc += A[mat * 256 + row * 16 + k] * B[mat * 256 + k * 16 + col];
    C[mat * 256 + row * 16 + col] = acc;
}
""", LaunchConfig(("nmat",), ("16", "16")), {"nmat": 1024}),
    "output_aliases_operand": ("""
__global__ void bmm_inplace(float *A, const float *B, int nmat) {
    int mat = blockIdx.x, row = threadIdx.y, col = threadIdx.x;
    if (mat >= nmat) return;
    float acc = 0.f;
    for (int k = 0; k < 16; ++k) acc += A[mat * 256 + row * 16 + k] * B[mat * 256 + k * 16 + col];
    A[mat * 256 + row * 16 + col] = acc;
}
""", LaunchConfig(("nmat",), ("16", "16")), {"nmat": 1024}),
    "non_affine_index": ("""
__global__ void bmm_square(const float *A, const float *B, float *C, int nmat) {
    int mat = blockIdx.x, row = threadIdx.y, col = threadIdx.x;
    if (mat >= nmat) return;
    float acc = 0.f;
    for (int k = 0; k < 16; ++k) acc += A[mat * 256 + row * row + k] * B[mat * 256 + k * 16 + col];
    C[mat * 256 + row * 16 + col] = acc;
}
""", LaunchConfig(("nmat",), ("16", "16")), {"nmat": 1024}),
    "unused_launch_axis": ("""
__global__ void bmm_dup(const float *A, const float *B, float *C, int nmat) {
    int mat = blockIdx.x, row = threadIdx.y, col = threadIdx.x;
    if (mat >= nmat) return;
    float acc = 0.f;
    for (int k = 0; k < 16; ++k) acc += A[mat * 256 + row * 16 + k] * B[mat * 256 + k * 16 + col];
    C[mat * 256 + row * 16 + col] = acc;
}
""", LaunchConfig(("nmat",), ("16", "16", "2")), {"nmat": 1024}),
    "guard_narrower_than_matrix": ("""
__global__ void bmm_part(const float *A, const float *B, float *C, int nmat) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int mat = t / 256, row = t / 16 % 16, col = t % 16;
    if (mat < nmat && row < 15) {
        float acc = 0.f;
        for (int k = 0; k < 16; ++k) acc += A[mat * 256 + row * 16 + k] * B[mat * 256 + k * 16 + col];
        C[mat * 256 + row * 16 + col] = acc;
    }
}
""", LaunchConfig(("nmat",), ("256",)), {"nmat": 1024}),
    "accumulator_not_zeroed": ("""
__global__ void bmm_bias(const float *A, const float *B, float *C, int nmat) {
    int mat = blockIdx.x, row = threadIdx.y, col = threadIdx.x;
    if (mat >= nmat) return;
    float acc = 1.0f;
    for (int k = 0; k < 16; ++k) acc += A[mat * 256 + row * 16 + k] * B[mat * 256 + k * 16 + col];
    C[mat * 256 + row * 16 + col] = acc;
}
""", LaunchConfig(("nmat",), ("16", "16")), {"nmat": 1024}),
    "k_bound_loaded_into_a_local": ("""
__global__ void bmm_lens(const float *A, const float *B, const int *lens, float *C, int batch, int M, int N) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int b = t / (M * N), i = t / N % M, j = t % N;
    if (b >= batch) return;
    int K = lens[b];
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(b * M + i) * 16 + k] * B[(b * 16 + k) * N + j];
    C[(b * M + i) * N + j] = acc;
}
""", LaunchConfig(("(batch * M * N + 255) / 256",), ("256",)), {"batch": 1024, "M": 16, "N": 16}),
    "output_aliases_operand_through_a_local_pointer": ("""
__global__ void bmm_alias(float *C, const float *B, int batch, int M, int N, int K) {
    int b = blockIdx.z, i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= batch || i >= M || j >= N) return;
    const float *a = C + b * M * K;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += a[i * K + k] * B[b * K * N + k * N + j];
    C[b * M * N + i * N + j] = acc;
}
""", LaunchConfig(("1", "1", "batch"), ("16", "16")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "early_exit_inside_the_k_loop": ("""
__global__ void bmm_exit(const float *A, const float *B, float *C, int batch, int M, int N, int K) {
    int b = blockIdx.x, i = threadIdx.y, j = threadIdx.x;
    if (b >= batch) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        if (A[(b * M + i) * K + k] == 0.0f) break;
        acc += A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
    }
    C[(b * M + i) * N + j] = acc;
}
""", LaunchConfig(("batch",), ("N", "M")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "non_associative_update": ("""
__global__ void bmm_horner(const float *A, const float *B, float *C, int batch, int M, int N, int K, float x) {
    int b = blockIdx.x, i = threadIdx.y, j = threadIdx.x;
    if (b >= batch) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc = acc * x + A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
    C[(b * M + i) * N + j] = acc;
}
""", LaunchConfig(("batch",), ("N", "M")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "while_counter_stepped_twice": ("""
__global__ void bmm_skip(const float *A, const float *B, float *C, int batch, int M, int N, int K) {
    int b = blockIdx.x, i = threadIdx.y, j = threadIdx.x;
    if (b >= batch) return;
    float acc = 0.0f;
    int k = 0;
    while (k < K) {
        acc += A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
        k++;
        k++;
    }
    C[(b * M + i) * N + j] = acc;
}
""", LaunchConfig(("batch",), ("N", "M")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "helper_that_is_not_a_dot_product": ("""
__device__ float blend(const float *a, const float *b, int K, int ldb) {
    float s = 0.0f;
    for (int k = 0; k < K; ++k) s = 0.5f * s + a[k] * b[k * ldb];
    return s;
}
__global__ void bmm_blend(const float *A, const float *B, float *C, int batch, int M, int N, int K) {
    int b = blockIdx.x, i = threadIdx.y, j = threadIdx.x;
    if (b < batch) C[(b * M + i) * N + j] = blend(A + (b * M + i) * K, B + b * K * N + j, K, N);
}
""", LaunchConfig(("batch",), ("N", "M")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "int_sum_of_float_products": ("""
__global__ void bmm_trunc(const float *A, const float *B, float *C, int batch, int M, int N, int K) {
    int b = blockIdx.x, i = threadIdx.y, j = threadIdx.x;
    if (b >= batch) return;
    int acc = 0;
    for (int k = 0; k < K; ++k) acc += A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
    C[(b * M + i) * N + j] = acc;
}
""", LaunchConfig(("batch",), ("N", "M")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "helper_writes_through_a_reference": ("""
__device__ float dot_into(const float *a, const float *b, int K, int ldb, float &out) {
    float s = 0.0f;
    for (int k = 0; k < K; ++k) s += a[k] * b[k * ldb];
    out = s;
    return s;
}
__global__ void bmm_ref(const float *A, const float *B, float *C, float *last, int batch, int M, int N, int K) {
    int b = blockIdx.x, i = threadIdx.y, j = threadIdx.x;
    if (b < batch) C[(b * M + i) * N + j] = dot_into(A + (b * M + i) * K, B + b * K * N + j, K, N, last[0]);
}
""", LaunchConfig(("batch",), ("N", "M")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "accumulator_changed_before_its_loop": ("""
__global__ void bmm_bias_first(const float *A, const float *B, const float *bias, float *C, int batch, int M, int N, int K) {
    float sum = 0.0f;
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int b = t / (M * N), i = t / N % M, j = t % N;
    if (b >= batch) return;
    sum += bias[j];
    for (int k = 0; k < K; ++k) sum += A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
    C[t] = sum;
}
""", LaunchConfig(("(batch * M * N + 255) / 256",), ("256",)), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "accumulator_outside_the_batch_loop": ("""
__global__ void bmm_running(const float *A, const float *B, float *C, int batch, int M, int N, int K) {
    int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    if (i >= M || j >= N) return;
    for (int b = 0; b < batch; ++b) {
        for (int k = 0; k < K; ++k) sum += A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
        C[(b * M + i) * N + j] = sum;
    }
}
""", LaunchConfig(("1", "1"), ("16", "16")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "load_local_converts": ("""
__global__ void bmm_round(const double *A, const double *B, double *C, int batch, int M, int N, int K) {
    int b = blockIdx.x, i = threadIdx.y, j = threadIdx.x;
    if (b >= batch) return;
    double acc = 0.0;
    for (int k = 0; k < K; ++k) {
        float a = A[(b * M + i) * K + k];
        double w = B[(b * K + k) * N + j];
        acc += a * w;
    }
    C[(b * M + i) * N + j] = acc;
}
""", LaunchConfig(("batch",), ("N", "M")), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
    "stride_loop_axis_also_read_directly": ("""
__global__ void bmm_diag(const float *A, const float *B, float *C, int batch, int M, int N, int K) {
    int b = blockIdx.x;
    if (b >= batch) return;
    for (int i = threadIdx.x; i < M; i += blockDim.x) {
        int j = threadIdx.x;
        float s = 0.f;
        for (int k = 0; k < K; ++k) s += A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
        C[(b * M + i) * N + j] = s;
    }
}
""", LaunchConfig(("batch",), ("16",)), {"batch": 1024, "M": 16, "N": 16, "K": 16}),
}


def _name(source: str) -> str:
    return source.split("void ", 1)[1].split("(", 1)[0].strip()


def _rewrites(case: str, device: DeviceLimits | None = H200_LIKE) -> list:
    source, name, launch, constants = MATCHES[case]
    return BatchedSmallMatmul().apply(ApplierInput(source, name, launch, constants, device))


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_batched_products_written_differently_are_rewritten(case: str) -> None:
    rewrites = _rewrites(case)
    assert rewrites, case
    assert all("__syncthreads();  // the tiles are refilled" in r.source for r in rewrites)
    # 256 threads per group of matrices; a block that holds one matrix has whole warps for its outputs
    assert all(r.launch.block == ("256",) if "per block in shared" in r.note else
               int(r.launch.block[0]) % 32 == 0 and 32 <= int(r.launch.block[0]) <= 256 for r in rewrites)
    assert "outputs per thread" in rewrites[0].note


def test_shapes_are_read_from_each_mapping() -> None:
    source, name, launch, constants = MATCHES["flat_id_double_alpha_beta_bt"]
    product = batched_product(source, name, launch.grid, launch.block, constants)
    assert product is not None and product.element == "double"
    assert (product.batch.text(), product.m.text(), product.n.text(), product.k.text()) == ("batch", "M", "N", "K")
    assert product.b.inner.text() == "1" and product.b.outer.text() == "K"  # Bt: k-contiguous
    assert str(product.epilogue) == "alpha * {acc} + beta * {c}"
    source, name, launch, constants = MATCHES["template_block_per_matrix"]
    product = batched_product(source, name, launch.grid, launch.block, constants)
    assert product is not None and product.m.text() == "D" and product.batch.text() == "count"
    source, name, launch, constants = MATCHES["grid_stride_batch_define_at"]
    product = batched_product(source, name, launch.grid, launch.block, constants)
    assert product is not None and product.a.outer.text() == "1" and product.batch.text() == "nb"
    source, name, launch, constants = MATCHES["split_1d_block_runtime"]
    product = batched_product(source, name, launch.grid, launch.block, constants)
    assert product is not None and str(product.epilogue) == "{c} + ({acc})"


def test_a_batch_counted_only_by_the_launch_keeps_that_grid_axis() -> None:
    """`blockIdx.z` per matrix, `grid.z = batch` with `batch` a spec scalar the kernel never
    sees, threadIdx used straight in the subscripts: one matrix per block, grid z kept."""
    source, name, launch, constants = MATCHES["raw_threadidx_launch_batch"]
    rewrites = BatchedSmallMatmul().apply(ApplierInput(source, name, launch, constants, H200_LIKE))
    assert rewrites and all(r.launch.grid == ("1", "1", "batch") for r in rewrites)
    # 16x16 outputs: 4x1 per thread is 64 threads, 2x1 128, 1x1 256 (whole warps, never more than 256)
    assert [r.launch.block for r in rewrites[:3]] == [("64",), ("128",), ("256",)]
    # then the grid's other blockings, one pass each (a block holds one matrix)
    assert [p for r in rewrites for name, p in r.params if name == "passes"] == [1] * 11
    assert "const long long batch_bg = gridDim.z;" in rewrites[0].source
    assert "tid_bg = (int)((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x)" in rewrites[0].source
    # two blocks per matrix along x would repeat the work: not this shape
    doubled = LaunchConfig(("2", "1", "batch"), ("N", "M"))
    assert BatchedSmallMatmul().apply(ApplierInput(source, "bmm_raw", doubled, {"M": 16, "N": 16, "K": 16})) == []


def test_a_template_type_stays_generic() -> None:
    [first, *_] = _rewrites("typename_pointer_advance_pragma")
    assert "__shared__ __align__(16) T tiles_bg" in first.source and "T acc_bg[rows_bg][cols_bg]" in first.source
    assert "float4" not in first.source  # the vector type would not follow T


def test_template_sizes_fold_and_runtime_sizes_keep_a_fallback() -> None:
    [first, *_] = _rewrites("template_block_per_matrix")
    assert "constexpr int m_bg = (D)" in first.source and "tiles_bg[group_bg * per_bg" in first.source
    [runtime, *_] = _rewrites("flat_id_double_alpha_beta_bt")
    # the spec's group (3 of 24x20x12: 3 * 564 doubles), not the whole budget: residency stays thread-bound
    assert "const int m_bg = (M)" in runtime.source and "double tiles_bg[1692]" in runtime.source
    assert "if (group_bg == 0)" in runtime.source


def test_grid_comes_from_the_device_not_one_gpu() -> None:
    big = _rewrites("template_block_per_matrix", H200_LIKE)[0].launch.grid
    small = _rewrites("template_block_per_matrix", SMALL_GPU)[0].launch.grid
    assert big == (str(132 * 8 * 8),) and small == (str(20 * 6 * 8),)  # eight waves of resident blocks
    assert _rewrites("template_block_per_matrix", None)[0].launch.grid == (str(65536 // 4),)  # one block per group


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_leaves_near_misses_alone(case: str) -> None:
    source, launch, constants = NEAR_MISSES[case]
    # through `rewrites_of`: a spelling written plainly (while -> for, an inlined helper) must
    # not turn a near-miss into a match either
    assert rewrites_of(BatchedSmallMatmul(), ApplierInput(source, _name(source), launch, constants, H200_LIKE)) == []


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_compile(case: str, tmp_path: Path) -> None:
    """The hand-picked variants and the grid's corners, and for three kernels (fixed float sizes,
    runtime double sizes, a block per matrix) every grid point (one translation unit, a namespace
    each: one nvcc run), without spills."""
    rewrites = _rewrites(case)
    if case not in ("template_block_per_matrix", "flat_id_double_alpha_beta_bt", "raw_threadidx_launch_batch"):
        rewrites = _sample(rewrites)
    compile_together([r.source for r in rewrites], tmp_path)


def _point(rewrite) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    assert tuple(name for name, _ in rewrite.params) == ("thread_m", "thread_n", "passes")
    rows, cols, passes = (value for _, value in rewrite.params)
    return rows, cols, passes


def _sample(rewrites: list) -> list:
    """The hand-picked blockings (the first three) and the grid's corners: the fewest outputs per
    thread in two passes, the most (8x2 or what the matrix allows) in two passes."""
    grid = rewrites[3:]
    corners = [min(grid, key=lambda r: (_point(r)[0] * _point(r)[1], -_point(r)[2])),
               max(grid, key=lambda r: (_point(r)[0] * _point(r)[1], _point(r)[0], _point(r)[2]))]
    return rewrites[:3] + [r for r in corners if r not in rewrites[:3]]


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_the_grid_follows_the_hand_picked_blockings_in_lexicographic_order(case: str) -> None:
    rewrites = _rewrites(case)
    points = [_point(r) for r in rewrites]
    source, name, launch, constants = MATCHES[case]
    product = batched_product(source, name, launch.grid, launch.block, constants)
    assert product is not None
    first = len(_blockings(product.value(product.m, constants), product.value(product.n, constants)))
    assert points[:first] == [(rows, cols, 1) for rows, cols in _blockings(product.value(product.m, constants),
                                                                           product.value(product.n, constants))]
    assert len(set(points)) == len(points) and len({(r.source, r.launch) for r in rewrites}) == len(rewrites)
    assert all(p[2] == 1 for p in points[:first]) and points[first:] == sorted(points[first:])
    assert 11 <= len(points) <= 22
    for (rows, cols, passes), rewrite in zip(points, rewrites, strict=True):
        assert rows * cols <= 16 and passes in (1, 2)
        assert f"rows_bg = {rows}, cols_bg = {cols};" in rewrite.source
        assert (f"rows_bg * cols_bg * {passes} +" in rewrite.source) == (passes > 1)
        assert f"{rows}x{cols} outputs per thread" in rewrite.note


def test_passes_hold_more_matrices_per_block_until_shared_memory_caps_them() -> None:
    # 16x16x16 floats: 4x1 per thread is 4 matrices a group, 8 in two passes
    notes = {_point(r): r.note for r in _rewrites("template_block_per_matrix")}
    assert notes[(4, 1, 1)].startswith("4 matrices of 16x16") and notes[(4, 1, 2)].startswith("8 matrices of 16x16")
    assert notes[(4, 1, 2)].endswith(", 2 passes")
    # 48x48x48 doubles: one matrix (37 KB) fills the budget, so two passes would be the same group
    source, name, launch, _ = MATCHES["flat_id_double_alpha_beta_bt"]
    big = BatchedSmallMatmul().apply(ApplierInput(source, name, launch, {"M": 48, "N": 48, "K": 48, "batch": 99},
                                                  H200_LIKE))
    assert big and all(_point(r)[2] == 1 for r in big) and all(r.note.startswith("1 matrix") for r in big)


def test_the_problem_size_scalar_may_be_unknown() -> None:
    """The search hides the size scalar (the odd-size check changes it): the launch must still
    be proven to cover the guarded batch, and the grid is an expression over it."""
    source, name, launch, _ = MATCHES["template_block_per_matrix"]
    [first, *_] = BatchedSmallMatmul().apply(ApplierInput(source, name, launch, {}, H200_LIKE))
    assert first.launch.grid == ("min((count + 3) / 4, 8448)",)
    source, name, launch, constants = MATCHES["flat_id_double_alpha_beta_bt"]
    rewrites = BatchedSmallMatmul().apply(ApplierInput(source, name, launch, {"M": 24, "N": 20, "K": 12}, H200_LIKE))
    assert rewrites and rewrites[0].launch.grid == ("min((batch + 2) / 3, 8448)",)  # 3 of 24x20 give 256 threads 4 rows each


F, D = "const float*", "const double*"
# Per case: the spec (the original's launch) and small odd sizes to run both at on the CPU.
ON_CPU: dict[str, tuple[str, dict[str, int]]] = {
    "template_block_per_matrix": (spec_text("bmm_tpl<16>", ["count"], ["16", "16"], [
        ("A", F, "count * 256", ""), ("B", F, "count * 256", ""), ("C", "float*", "count * 256", "out"),
        ("count", "int", "40", "")]), {"count": 37}),
    "flat_id_double_alpha_beta_bt": (spec_text("dbmm_flat", ["(batch * M * N + 255) / 256"], ["256"], [
        ("batch", "int", "8", ""), ("M", "int", "24", ""), ("N", "int", "20", ""), ("K", "int", "12", ""),
        ("alpha", "double", "0.5", ""), ("A", D, "batch * M * K", ""), ("Bt", D, "batch * N * K", ""),
        ("beta", "double", "0.25", ""), ("C", "double*", "batch * M * N", "inout")]),
        {"batch": 13, "M": 9, "N": 6, "K": 5}),
    "grid_stride_batch_define_at": (spec_text("bmm_loop", ["1", "1", "64"], ["8", "8", "1"], [
        ("At", F, "nb * 64", ""), ("B", F, "nb * 64", ""), ("C", "float*", "nb * 64", "out"),
        ("nb", "int", "300", "")]), {"nb": 301}),
    "split_1d_block_runtime": (spec_text("bmm_split", ["1", "n_mats"], ["rows * cols"], [
        ("x", F, "n_mats * rows * inner", ""), ("w", F, "n_mats * inner * cols", ""),
        ("y", "float*", "n_mats * rows * cols", "inout"), ("n_mats", "int", "40", ""), ("rows", "int", "12", ""),
        ("cols", "int", "12", ""), ("inner", "int", "12", "")]), {"n_mats": 29, "rows": 5, "cols": 7, "inner": 11}),
    "thread_per_matrix_loops": (spec_text("bmm_per_thread", ["(nb + 127) / 128"], ["128"], [
        ("A", F, "nb * 36", ""), ("B", F, "nb * 36", ""), ("C", "float*", "nb * 36", "out"),
        ("nb", "int", "400", "")]), {"nb": 301}),
    "typename_pointer_advance_pragma": (spec_text("bmm_adv<float, 8>", ["nb"], ["64"], [
        ("A", F, "nb * 64", ""), ("B", F, "nb * 64", ""), ("C", "float*", "nb * 64", "out"),
        ("nb", "int", "100", "")]), {"nb": 37}),
    "block_stride_over_outputs": (spec_text("bmm_block_stride", ["batch"], ["128"], [
        ("A", F, "batch * M * K", ""), ("B", F, "batch * K * N", ""), ("C", "float*", "batch * M * N", "out"),
        ("batch", "int", "40", ""), ("M", "int", "12", ""), ("N", "int", "20", ""), ("K", "int", "9", "")]),
        {"batch": 13, "M": 5, "N": 7, "K": 3}),
    "raw_threadidx_launch_batch": (spec_text("bmm_raw", ["1", "1", "batch"], ["N", "M"], [
        ("A", F, "batch * M * K", ""), ("B", F, "batch * K * N", ""), ("C", "float*", "batch * M * N", "out"),
        ("M", "int", "16", ""), ("N", "int", "16", ""), ("K", "int", "16", ""), ("batch", "int", "20", "")]),
        {"batch": 7, "M": 5, "N": 6, "K": 3}),
    "thread_per_row_double": (spec_text("bmm_rows", ["(nb * M + 255) / 256"], ["256"], [
        ("A", D, "nb * M * K", ""), ("B", D, "nb * K * N", ""), ("C", "double*", "nb * M * N", "out"),
        ("nb", "int", "100", ""), ("M", "int", "8", ""), ("N", "int", "8", ""), ("K", "int", "8", "")]),
        {"nb": 77, "M": 5, "N": 9, "K": 3}),
}
ON_CPU["widened_products_template_acc"] = (spec_text("bmm_widen<float, double>", ["batch"], ["N", "M"], [
    ("A", F, "batch * M * K", ""), ("B", F, "batch * K * N", ""), ("C", "float*", "batch * M * N", "out"),
    ("batch", "int", "40", ""), ("M", "int", "12", ""), ("N", "int", "8", ""), ("K", "int", "20", "")]),
    {"batch": 13, "M": 5, "N": 7, "K": 19})
ON_CPU["widened_load_locals_float_sum"] = (spec_text("bmm_widen_locals", ["(batch * M * N + 255) / 256"], ["256"], [
    ("A", F, "batch * M * K", ""), ("B", F, "batch * K * N", ""), ("C", "float*", "batch * M * N", "out"),
    ("batch", "int", "40", ""), ("M", "int", "12", ""), ("N", "int", "8", ""), ("K", "int", "20", "")]),
    {"batch": 13, "M": 5, "N": 7, "K": 19})
TINY_GPU = DeviceLimits(sms=2, max_threads_per_sm=2048, max_threads_per_block=1024, shared_bytes_per_block=48 * 1024)


@needs_gxx
@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_compute_what_the_original_does_on_the_cpu(case: str, tmp_path: Path) -> None:
    """Each variant run on the CPU emulation (threads, barriers, shared arrays) at small odd
    sizes that differ from the spec's (so runtime sizes, partial groups and the grid-stride
    loop over groups are exercised) gives the original's outputs."""
    source, name, launch, constants = MATCHES[case]
    spec, sizes = ON_CPU[case]
    rewrites = BatchedSmallMatmul().apply(ApplierInput(source, name, launch, constants, TINY_GPU))
    assert rewrites
    assert_same_outputs(source, spec, _sample(rewrites), sizes, tmp_path, below=1e-4)


REDTEAM = Path(__file__).resolve().parents[2] / "data/redteam/batched_gemm"
# Red-team kernels run against their rewrites on the CPU at small odd sizes (the spec's own
# sizes are the GPU's). Left out: kernels whose spec grid is a literal of thousands of blocks
# (thousands of emulated blocks are too slow for that); the GPU suite checks those.
REDTEAM_SIZES: dict[str, dict[str, int]] = {
    "bmm_acc_declared_first": {"batch": 9, "M": 5, "N": 7, "K": 3},
    "bmm_batch_loop_in_thread": {"batch": 5, "M": 9, "N": 7, "K": 5},
    "bmm_inclusive_bounds": {"batch": 9, "M": 5, "N": 7, "K": 3},
    "bmm_ldg_restrict": {"nmat": 9, "M": 5, "N": 7, "K": 3},
    "bmm_loads_into_locals": {"M": 5, "N": 7, "K": 3, "batch": 9},
    "bmm_block_tid_divmod": {"batch": 7, "M": 5, "N": 6, "K": 3},
    "bmm_device_dot_helper": {"batch": 5, "M": 9, "N": 7, "K": 5},
    "bmm_double_accumulate_ll": {"batch": 9, "M": 5, "N": 7, "K": 3},
    "bmm_flat_batch_gridy": {"M": 5, "N": 7, "K": 3, "batch": 9},
    "bmm_flat_decode_mnk": {"batch": 9, "M": 5, "N": 7, "K": 3},
    "bmm_flat_divmod": {"batch": 9, "n": 5},
    "bmm_float_data_double_products": {"batch": 9, "M": 5, "N": 7, "K": 19},
    "bmm_index_macros_3d": {"M": 5, "N": 7, "K": 3, "batch": 9},
    "bmm_int_thread_per_output": {"batch": 9, "M": 5, "N": 7, "K": 3},
    "bmm_local_ptrs_size_t": {"batch": 9, "M": 5, "N": 7, "K": 3},
    "bmm_pointer_walk_increment": {"batch": 9, "M": 5, "N": 7, "K": 3},
    "bmm_row_col_pointers_fmaf": {"batch": 9, "M": 5, "N": 7, "K": 3},
    "bmm_strided_alpha_beta": {"m": 5, "n": 7, "k": 3, "batchCount": 9},
    "bmm_strides_colmajor_b": {"M": 5, "N": 7, "K": 3, "batch": 9},
    "bmm_swapped_xy": {"M": 5, "N": 7, "K": 3, "batch": 9},
    "bmm_template_fixed": {"nmat": 9},
    "bmm_template_tm_tn_tk": {"count": 9},
    "bmm_thread_per_matrix": {"count": 37},
    "bmm_zgrid_pointer_advance": {"M": 5, "N": 7, "K": 3, "batch": 9},
    "bmm_zgrid_rowcol": {"M": 5, "N": 7, "K": 3, "batch": 9},
}


@needs_gxx
@pytest.mark.parametrize("case", sorted(REDTEAM_SIZES))
def test_red_team_rewrites_compute_what_the_original_does_on_the_cpu(case: str, tmp_path: Path) -> None:
    from regrapht.app.optimize import kernel_target
    from regrapht.spec.model import load_spec

    source = (REDTEAM / f"{case}.cu").read_text()
    spec = (REDTEAM / f"{case}.regrapht.toml").read_text()
    [kernel] = load_spec(REDTEAM / f"{case}.regrapht.toml").kernels
    target = kernel_target(kernel)
    given = ApplierInput(source, kernel.name, target.launch, target.constants, TINY_GPU)
    rewrites = rewrites_of(BatchedSmallMatmul(), given)
    assert rewrites
    # the hand-picked ones and one corner
    assert_same_outputs(source, spec, _sample(rewrites)[:4], REDTEAM_SIZES[case], tmp_path, below=1e-4, int_scale=8)


SHAPE_KERNEL = """
__global__ void bmm_any(const {t} *A, const {t} *B, {t} *C, int batch, int M, int N, int K) {{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int b = t / (M * N), i = t / N % M, j = t % N;
    if (b >= batch) return;
    {t} acc = 0;
    for (int k = 0; k < K; ++k) acc += A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
    C[(b * M + i) * N + j] = acc;
}}
"""
NARROW_GPU = DeviceLimits(sms=40, max_threads_per_sm=1024, max_threads_per_block=128, shared_bytes_per_block=32 * 1024)


@pytest.mark.parametrize("device", [H200_LIKE, SMALL_GPU, NARROW_GPU], ids=["h200", "small", "narrow"])
@pytest.mark.parametrize("element", ["float", "double"])
def test_launch_and_tiling_across_small_shapes_follow_the_device(device: DeviceLimits, element: str) -> None:
    """M, N, K in 4..64 (odd, non-square), batch 1..100000: every choice stays inside the
    device's limits (threads per block, shared memory per block), every thread of a block has
    outputs unless shared memory caps the group, and the grid is one block per group up to
    eight waves of the device's resident blocks."""
    size = 8 if element == "double" else 4
    source = SHAPE_KERNEL.format(t=element)
    launch = LaunchConfig(("(batch * M * N + 255) / 256",), ("256",))
    extents = (4, 7, 16, 33, 64)
    for m in extents:
        for n in extents:
            for k in extents:
                per = m * (k + 1) + k * (n + 1)
                limit = min(48 * 1024, device.shared_bytes_per_block) // size
                for batch in (1, 37, 100000):
                    sizes = {"batch": batch, "M": m, "N": n, "K": k}
                    rewrites = BatchedSmallMatmul().apply(ApplierInput(source, "bmm_any", launch, sizes, device))
                    assert bool(rewrites) == (per <= limit), (m, n, k, batch)
                    for rewrite in rewrites:
                        threads = int(rewrite.launch.block[0])
                        assert threads == min(256, device.max_threads_per_block)
                        tiles = int(rewrite.source.split(f"{element} tiles_bg[")[1].split("]")[0])
                        assert tiles * size <= min(48 * 1024, device.shared_bytes_per_block)
                        group = int(rewrite.note.split(" matri")[0])
                        rows, cols = (int(x) for x in rewrite.note.split(", ")[1].split(" outputs")[0].split("x"))
                        assert group >= 1 and group * per <= tiles
                        work = group * -(-m // rows) * -(-n // cols)
                        assert work >= threads or group == limit // per, (m, n, k, rows, cols, group)
                        waves = device.resident_blocks(threads) * 8
                        assert int(rewrite.launch.grid[0]) == min(-(-batch // group), waves), (m, n, k, batch)


def test_widened_products_are_formed_where_the_original_forms_them() -> None:
    """`(double)A[..] * (double)B[..]` on float data: the product type is read from the casts
    (a template's `Acc`, a load local's type), and the rewrite forms every product there."""
    source, name, launch, constants = MATCHES["widened_products_template_acc"]
    product = batched_product(source, name, launch.grid, launch.block, constants)
    assert product is not None and (product.element, product.acc_type, product.product_type) == ("float", "double", "double")
    assert product.product_text == "Acc"  # as written: the template stays generic
    for rewrite in _rewrites("widened_products_template_acc"):
        assert "Acc av_bg[rows_bg], bv_bg[cols_bg];" in rewrite.source
        assert "sum_bg += (Acc)A[" in rewrite.source and "* (Acc)B[" in rewrite.source
    source, name, launch, constants = MATCHES["widened_load_locals_float_sum"]
    product = batched_product(source, name, launch.grid, launch.block, constants)
    assert product is not None and (product.acc_type, product.product_type) == ("float", "double")
    source, name, launch, constants = MATCHES["template_block_per_matrix"]
    product = batched_product(source, name, launch.grid, launch.block, constants)
    assert product is not None and product.product_type == "float"
    assert "float av_bg[rows_bg]" in _rewrites("template_block_per_matrix")[0].source


@needs_gxx
def test_double_products_of_float_data_stay_bit_identical(tmp_path: Path) -> None:
    """The red team's mixed-precision kernel: every rewrite gives exactly the original's floats
    on the CPU (products exact in double, summed in the same order); the same rewrite with the
    products formed in float instead does not, so the comparison can tell the two apart."""
    from regrapht.app.optimize import kernel_target
    from regrapht.spec.model import load_spec

    case = "bmm_float_data_double_products"
    source = (REDTEAM / f"{case}.cu").read_text()
    spec = (REDTEAM / f"{case}.regrapht.toml").read_text()
    [kernel] = load_spec(REDTEAM / f"{case}.regrapht.toml").kernels
    target = kernel_target(kernel)
    sizes = {"batch": 9, "M": 5, "N": 7, "K": 19}
    rewrites = BatchedSmallMatmul().apply(ApplierInput(source, kernel.name, target.launch, target.constants, TINY_GPU))
    assert len(rewrites) == 20
    for index, rewrite in enumerate(_sample(rewrites)):
        where = tmp_path / str(index)
        where.mkdir()
        assert same_outputs(source, spec, rewrite.source, rewrite.launch, sizes, where) == 0.0, rewrite.note
    dropped = rewrites[2].source.replace("double av_bg[", "float av_bg[")
    assert dropped != rewrites[2].source
    (tmp_path / "dropped").mkdir()
    assert same_outputs(source, spec, dropped, rewrites[2].launch, sizes, tmp_path / "dropped") > 0.0
