"""MatmulTiling on the dense-product idiom: GEMMs written differently (alpha/beta, fmaf,
transposed operands, early-return guards, batched) get register-blocked shared tiles;
near-misses (accumulating into C, loaded indices, data-dependent K, side effects, a non-zero
start) do not; the tilings are a parameter grid (hand-picked ones first, unchanged), within the
device's shared memory; every rewrite compiles with nvcc and computes what the original does on
the CPU emulation at sizes that are not multiples of any tile."""

from __future__ import annotations

from pathlib import Path

import pytest
from cpu_cuda import assert_same_outputs, needs_gxx, spec_text
from nvcc_check import compile_together, needs_nvcc

from regrapht.search.appliers import ApplierInput, DeviceLimits
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


def _rewrites(case: str, constants: dict[str, int] | None = None, device: DeviceLimits | None = None) -> list:
    source, launch, _ = MATCHES[case]
    return MatmulTiling().apply(ApplierInput(source, _name(source), launch, constants or {}, device))


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_tiles_products_written_differently(case: str) -> None:
    rewrites = _rewrites(case)
    # large products: 4 shapes x 3 K slabs x single/double, less the three double-buffered
    # 32-deep slabs of 128-wide tiles (over 48 KB); batched ones: 2 of those less
    assert len(rewrites) == (22 if case == "batched_small" else 21)
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
    notes = [r.note for r in _rewrites("alpha_beta_fmaf_early_return")][:5]
    assert notes == ["128x128 shared tiles, 8x8 outputs per thread, double-buffered",
                     "64x64 shared tiles, 4x4 outputs per thread, double-buffered",
                     "128x128 shared tiles, 8x8 outputs per thread",
                     "128x64 shared tiles, 8x8 outputs per thread, double-buffered",
                     "64x64 shared tiles, 4x4 outputs per thread"]


COORDINATES = ("tile_m", "tile_n", "tile_k", "thread_m", "thread_n", "double_buffer")


def _point(rewrite) -> tuple[int, ...]:  # type: ignore[no-untyped-def]
    assert tuple(name for name, _ in rewrite.params) == COORDINATES
    return tuple(value for _, value in rewrite.params)


@pytest.mark.parametrize(("case", "constants"), [("alpha_beta_fmaf_early_return", {}), ("batched_small", {}),
                                                 ("batched_small", {"M": 64, "N": 48}),
                                                 ("alpha_beta_fmaf_early_return", {"M": 32, "N": 20})])
def test_the_grid_follows_the_hand_picked_tilings_in_lexicographic_order(case: str, constants: dict[str, int]) -> None:
    source, launch, _ = MATCHES[case]
    before = {"alpha_beta_fmaf_early_return": 5, "batched_small": 3}[case] if not constants else 2
    rewrites = _rewrites(case, constants)
    points = [_point(r) for r in rewrites]
    assert len(set(points)) == len(points) and len({(r.source, r.launch) for r in rewrites}) == len(rewrites)
    assert points[before:] == sorted(points[before:]) and 12 <= len(points) <= 32
    for (bm, bn, bk, tm, tn, double), rewrite in zip(points, rewrites, strict=True):
        assert rewrite.launch.block == (str(bn // tn), str(bm // tm))
        assert 64 <= (bm // tm) * (bn // tn) <= 256
        assert (2 if double else 1) * bk * (bm + bn + 8) * 4 <= 48 * 1024
        assert f"float As_rg[{2 if double else 1}][{bk}][{bm} + 4]" in rewrite.source
        assert rewrite.note.startswith(f"{bm}x{bn} shared tiles, {tm}x{tn} outputs per thread")
    # the hand-picked tilings keep their notes; the others name their K slab
    assert all("K slabs" not in r.note for r in rewrites[:before])
    assert all(f"K slabs of {p[2]}" in r.note for p, r in zip(points[before:], rewrites[before:], strict=True))


def test_small_matrices_get_two_by_two_blocking_in_a_32x32_tile() -> None:
    rewrites = _rewrites("alpha_beta_fmaf_early_return", {"M": 32, "N": 32})
    [two] = [r for r in rewrites if _point(r) == (32, 32, 16, 2, 2, 1)]
    assert two.launch.block == ("16", "16")
    assert "*reinterpret_cast<float2 *>(&a_frag_rg[0]) = *reinterpret_cast<const float2 *>" \
           "(&As_rg[buf_rg][kk_rg][threadIdx.y * 2 + 0]);" in two.source
    assert "r = tile_row_rg + threadIdx.y * 2 + (i_rg & 1) + (i_rg >> 1) * 32;" in two.source


def test_the_grid_stays_within_the_devices_shared_memory_and_threads() -> None:
    small = DeviceLimits(132, 2048, 1024, 16 * 1024)
    points = [_point(r) for r in _rewrites("alpha_beta_fmaf_early_return", device=small)]
    assert (128, 128, 8, 8, 8, 1) in points  # the hand-picked tilings stay first (16896 bytes)
    assert all((2 if d else 1) * bk * (bm + bn + 8) * 4 <= 16 * 1024 for bm, bn, bk, _, _, d in points[5:])
    assert len(points) < 21
    few_threads = DeviceLimits(132, 2048, 128, 48 * 1024)
    points = [_point(r) for r in _rewrites("alpha_beta_fmaf_early_return", device=few_threads)]
    assert all((bm // tm) * (bn // tn) <= 128 for bm, bn, _, tm, tn, _ in points[5:])


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
    """Every grid point (one translation unit, a namespace each: one nvcc run), without spills."""
    rewrites = _rewrites(case) + (_rewrites(case, {"M": 32, "N": 32}) if case == "transposed_a" else [])
    compile_together([r.source for r in rewrites], tmp_path)


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


# A sample of the grid beside the hand-picked tilings (all of which run): every K slab, shape and
# blocking, single and double-buffered (the whole grid of both cases passed, 4 s a point).
SAMPLE = {(128, 128, 32, 8, 8, 0), (128, 64, 16, 8, 8, 0), (64, 128, 32, 8, 8, 0), (64, 64, 8, 4, 4, 1),
          (32, 32, 32, 2, 2, 1), (32, 32, 8, 4, 2, 0), (32, 32, 16, 2, 4, 1), (64, 32, 32, 4, 4, 0)}


@needs_gxx
@pytest.mark.parametrize("case", sorted(ON_CPU))
def test_rewrites_compute_what_the_original_does_on_the_cpu(case: str, tmp_path: Path) -> None:
    """Tilings, double-buffered or not, run on the CPU emulation (threads, barriers, shared
    tiles) at sizes that are not multiples of the tiles give the original's outputs: the
    hand-picked ones and a sample of the grid, the small-matrix grid's too (any size is sound)."""
    spec, sizes = ON_CPU[case]
    large = _rewrites(case)
    small = _rewrites(case, {"M": 32, "N": 32} if case.startswith("alpha") else {"M": 64, "N": 64})
    chosen = large[:5] + [r for r in large[5:] + small if _point(r) in SAMPLE]
    assert len(chosen) >= 9
    assert_same_outputs(MATCHES[case][0], spec, chosen, sizes, tmp_path, below=1e-4)
