"""MatmulTiling on the dense-product idiom: GEMMs written differently (alpha/beta, fmaf,
transposed operands, early-return guards, batched) get register-blocked shared tiles;
near-misses (accumulating into C, loaded indices, data-dependent K, side effects, a non-zero
start) do not; every rewrite compiles with nvcc."""

from __future__ import annotations

from pathlib import Path

import pytest
from cpu_cuda import needs_gxx, same_outputs, spec_text
from nvcc_check import compile_ok, needs_nvcc

from regrapht.search.appliers import ApplierInput
from regrapht.search.appliers.matmul import MatmulTiling
from regrapht.spec.launch import LaunchConfig

GRID = LaunchConfig(("(N + 15) / 16", "(M + 15) / 16"), ("16", "16"))

MATCHES = {
    "alpha_beta_fmaf_early_return": ("""
__global__ void sgemm_ab(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= M || c >= N) return;
    float sum = 0.f;
    for (int i = 0; i < K; i++)
        sum = fmaf(A[r * K + i], B[i * N + c], sum);
    C[r * N + c] = alpha * sum + beta * C[r * N + c];
}
""", GRID, "A k-contiguous"),
    "transposed_a": ("""
__global__ void gemm_tn(const float *At, const float *B, float *C, int M, int N, int K) {
    int col = threadIdx.x + blockDim.x * blockIdx.x;
    int row = threadIdx.y + blockDim.y * blockIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc = acc + At[k * M + row] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
""", GRID, "A m-contiguous"),
    "transposed_b_lda": ("""
__global__ void gemm_nt(const float *A, const float *Bt, float *C, int M, int N, int K, int lda, int ldb, int ldc) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y * blockDim.y + threadIdx.y;
    if (m < M && n < N) {
        float acc = 0;
        for (int k = 0; k < K; k += 1) {
            acc += A[m * lda + k] * Bt[n * ldb + k];
        }
        C[m * ldc + n] = acc;
    }
}
""", GRID, "B k-contiguous"),
    "batched_small": ("""
__global__ void bmm(const float *A, const float *B, float *C, int batch, int M, int N, int K) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    if (i < M && j < N && b < batch) {
        float s = 0.0f;
        for (int k = 0; k < K; k++)
            s += A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
        C[(b * M + i) * N + j] = s;
    }
}
""", LaunchConfig(("(N + 15) / 16", "(M + 15) / 16", "batch"), ("16", "16", "1")), "batched"),
    "pragma_unroll": ("""
__global__ void gemm_unrolled(const float *A, const float *B, float *C, int M, int N, int K) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < M && c < N) {
        float s = 0.0f;
#pragma unroll 4
        for (int k = 0; k < K; k++) s += A[r * K + k] * B[k * N + c];
        C[r * N + c] = s;
    }
}
""", GRID, "a #pragma before the k loop"),
}

NEAR_MISSES = {
    "accumulates_into_c": ("""
__global__ void gemm_acc(const float *A, const float *B, float *C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        C[row * N + col] = 0.0f;
        for (int k = 0; k < K; k++) C[row * N + col] += A[row * K + k] * B[k * N + col];
    }
}
"""),
    "loaded_index": ("""
__global__ void gemm_perm(const float *A, const float *B, const int *p, float *C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) acc += A[row * K + p[k]] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
"""),
    "data_dependent_k": ("""
__global__ void gemm_ragged(const float *A, const float *B, const int *len, float *C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < len[row]; k++) acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
"""),
    "side_effect": ("""
__global__ void gemm_count(const float *A, const float *B, float *C, int *flops, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
        atomicAdd(flops, 2 * K);
    }
}
"""),
    "nonzero_start": ("""
__global__ void gemm_bias(const float *A, const float *B, float *C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 1.0f;
        for (int k = 0; k < K; k++) acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
"""),
    "early_exit_in_loop": ("""
__global__ void gemm_exit(const float *A, const float *B, float *C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) { if (A[row * K + k] == 0.0f) return; acc += A[row * K + k] * B[k * N + col]; }
        C[row * N + col] = acc;
    }
}
"""),
}


def _name(source: str) -> str:
    return source.split("void ", 1)[1].split("(", 1)[0].strip()


def _rewrites(case: str) -> list:
    source, launch, _ = MATCHES[case]
    return MatmulTiling().apply(ApplierInput(source, _name(source), launch))


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_tiles_products_written_differently(case: str) -> None:
    rewrites = _rewrites(case)
    assert len(rewrites) == (3 if case == "batched_small" else 5)
    assert all("__shared__ __align__(16) float As_rg" in r.source for r in rewrites)
    assert "double-buffered" in rewrites[0].note and "__syncthreads();\n        buf_rg ^= 1;" in rewrites[0].source


def test_alpha_beta_store_is_kept() -> None:
    [first, *_] = _rewrites("alpha_beta_fmaf_early_return")
    assert "alpha * acc_rg[i_rg][j_rg] + beta * C[r * N + c]" in first.source
    assert first.launch.grid == ("(N + 127) / 128", "(M + 127) / 128") and first.launch.block == ("16", "16")


def test_transposed_operands_load_along_their_contiguous_direction() -> None:
    [tn, *_] = _rewrites("transposed_a")
    assert "reinterpret_cast<float4 *>(&As_rg[buf_rg ^ 1][c_rg][r_rg])" in tn.source  # four rows of At at once
    [nt, *_] = _rewrites("transposed_b_lda")
    assert "(ldb) & 3) == 0" in nt.source and "Bs_rg[buf_rg ^ 1][c_rg + 3][r_rg]" in nt.source
    single = _rewrites("transposed_b_lda")[2]
    assert "double" not in single.note and "Bs_rg[0][c_rg + 3][r_rg]" in single.source


def test_tilings_offered_best_first() -> None:
    notes = [r.note for r in _rewrites("alpha_beta_fmaf_early_return")]
    assert notes == ["128x128 shared tiles, 8x8 outputs per thread, double-buffered",
                     "64x64 shared tiles, 4x4 outputs per thread, double-buffered",
                     "128x128 shared tiles, 8x8 outputs per thread",
                     "128x64 shared tiles, 8x8 outputs per thread, double-buffered",
                     "64x64 shared tiles, 4x4 outputs per thread"]


def test_batched_product_takes_a_matrix_per_grid_z() -> None:
    rewrites = _rewrites("batched_small")
    assert rewrites[0].launch.grid == ("(N + 63) / 64", "(M + 63) / 64", "min(batch, 65535)")
    source, launch, _ = MATCHES["batched_small"]
    small = MatmulTiling().apply(ApplierInput(source, "bmm", launch, {"M": 32, "N": 32}))
    assert small[0].launch.grid == ("(N + 31) / 32", "(M + 31) / 32", "min(batch, 65535)")


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_leaves_near_misses_alone(case: str) -> None:
    source = NEAR_MISSES[case]
    assert MatmulTiling().apply(ApplierInput(source, _name(source), GRID)) == []


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_compile(case: str, tmp_path: Path) -> None:
    for index, rewrite in enumerate(_rewrites(case)):
        compile_ok(rewrite.source, tmp_path, f"v{index}")


F = "const float*"
ON_CPU = {
    # K = 29 and unaligned rows: every load takes the element-by-element path at the edges
    "alpha_beta_fmaf_early_return": (spec_text("sgemm_ab", ["(N + 15) / 16", "(M + 15) / 16"], ["16", "16"], [
        ("M", "int", "64", ""), ("N", "int", "64", ""), ("K", "int", "64", ""), ("alpha", "float", "1.5", ""),
        ("A", F, "M * K", ""), ("B", F, "K * N", ""), ("beta", "float", "0.5", ""),
        ("C", "float*", "M * N", "inout")]), {"M": 37, "N": 45, "K": 29}),
    # lda = ldb = K = 40: float4 loads, two tiles in each direction, several slabs
    "transposed_b_lda": (spec_text("gemm_nt", ["(N + 15) / 16", "(M + 15) / 16"], ["16", "16"], [
        ("A", F, "M * lda", ""), ("Bt", F, "N * ldb", ""), ("C", "float*", "M * ldc", "out"), ("M", "int", "64", ""),
        ("N", "int", "64", ""), ("K", "int", "64", ""), ("lda", "int", "64", ""), ("ldb", "int", "64", ""),
        ("ldc", "int", "64", "")]), {"M": 130, "N": 136, "K": 40, "lda": 40, "ldb": 40, "ldc": 136}),
}


@needs_gxx
@pytest.mark.parametrize("case", sorted(ON_CPU))
def test_rewrites_compute_what_the_original_does_on_the_cpu(case: str, tmp_path: Path) -> None:
    """Every tiling, double-buffered or not, run on the CPU emulation (threads, barriers, shared
    tiles) at sizes that are not multiples of the tiles gives the original's outputs."""
    spec, sizes = ON_CPU[case]
    for index, rewrite in enumerate(_rewrites(case)):
        where = tmp_path / str(index)
        where.mkdir()
        source = MATCHES[case][0]
        assert same_outputs(source, spec, rewrite.source, rewrite.launch, sizes, where) < 1e-4, rewrite.note
