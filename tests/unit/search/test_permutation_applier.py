"""TiledPermutation: transposes, rotations and 3-D permutations written differently are tiled;
near-misses (in-place, data-dependent bounds, extra side effects, gathers, partial launches)
are left alone; every rewrite compiles with nvcc."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from cpu_cuda import assert_same_outputs, needs_gxx
from nvcc_check import compile_together, needs_nvcc

from regrapht.search.appliers import ApplierInput, DeviceLimits, rewrites_of
from regrapht.search.appliers.permutation import TiledPermutation
from regrapht.spec.launch import LaunchConfig

GRID_2D = ("(cols + 15) / 16", "(rows + 15) / 16")

MATCHES = {
    "textbook": ("""
__global__ void transpose(const float *in, float *out, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {
        out[x * rows + y] = in[y * cols + x];
    }
}
""", LaunchConfig(GRID_2D, ("16", "16")), ("x", "y")),
    "early_return_locals": ("""
#define TB 16
__global__ void transpose(const double *__restrict__ src, double *__restrict__ dst, int rows, int cols) {
    const int col = threadIdx.x + blockIdx.x * TB;
    const int row = threadIdx.y + TB * blockIdx.y;
    if (row >= rows || col >= cols) return;
    int from = row * cols + col;
    int to = col * rows + row;
    dst[to] = 2.0 * src[from];
}
""", LaunchConfig(GRID_2D, ("16", "16")), ("col", "row")),
    "rotation_90": ("""
template <typename T>
__global__ void rotate90(const T *img, T *rot, int h, int w) {
    unsigned int c = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int r = blockDim.y * blockIdx.y + threadIdx.y;
    if (c < w && r < h)
        rot[c * h + (h - 1 - r)] = img[r * w + c];
}
template __global__ void rotate90<int>(const int *, int *, int, int);
""", LaunchConfig(("(w + 31) / 32", "(h + 7) / 8"), ("32", "8")), ("c", "r")),
    "permute_3d": ("""
__global__ void permute021(const float *a, float *b, int D0, int D1, int D2) {
    int i2 = blockIdx.x * blockDim.x + threadIdx.x;
    int i1 = blockIdx.y * blockDim.y + threadIdx.y;
    int i0 = blockIdx.z;
    if (i0 < D0 && i1 < D1 && i2 < D2) {
        b[(i0 * D2 + i2) * D1 + i1] = a[(i0 * D1 + i1) * D2 + i2];
    }
}
""", LaunchConfig(("(D2 + 31) / 32", "(D1 + 7) / 8", "D0"), ("32", "8", "1")), ("i2", "i1")),
    "linear_index_rotation": ("""
__global__ void rot90_flat(const float *src, float *dst, int h, int w) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < h * w) {
        int r = t / w;
        int c = t % w;
        dst[c * h + (h - 1 - r)] = src[t];
    }
}
""", LaunchConfig(("(h * w + 255) / 256",), ("256",)), ("c", "r")),
}

NEAR_MISSES = {
    "linear_index_wrong_radix": ("""
__global__ void rot90_flat(const float *src, float *dst, int h, int w) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < h * w) {
        int r = t / h;
        int c = t % w;
        dst[c * h + (h - 1 - r)] = src[t];
    }
}
""", LaunchConfig(("(h * w + 255) / 256",), ("256",))),
    "in_place": ("""
__global__ void transpose_inplace(float *a, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < n && y < n) a[x * n + y] = a[y * n + x];
}
""", LaunchConfig(("(n + 15) / 16", "(n + 15) / 16"), ("16", "16"))),
    "data_dependent_bound": ("""
__global__ void ragged(const float *in, float *out, const int *lens, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < lens[y] && y < rows) out[x * rows + y] = in[y * cols + x];
}
""", LaunchConfig(GRID_2D, ("16", "16"))),
    "extra_side_effect": ("""
__global__ void transpose_count(const float *in, float *out, int *done, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {
        out[x * rows + y] = in[y * cols + x];
        atomicAdd(done, 1);
    }
}
""", LaunchConfig(GRID_2D, ("16", "16"))),
    "early_return_in_work": ("""
__global__ void transpose_skip(const float *in, float *out, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {
        if (in[y * cols + x] == 0.0f) return;
        out[x * rows + y] = in[y * cols + x];
    }
}
""", LaunchConfig(GRID_2D, ("16", "16"))),
    "gather": ("""
__global__ void gather_t(const float *in, const int *perm, float *out, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) out[x * rows + y] = in[perm[y] * cols + x];
}
""", LaunchConfig(GRID_2D, ("16", "16"))),
    "launch_covers_a_part": ("""
__global__ void transpose(const float *in, float *out, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) out[x * rows + y] = in[y * cols + x];
}
""", LaunchConfig(("4", "(rows + 15) / 16"), ("16", "16"))),
    "already_coalesced_copy": ("""
__global__ void copy2d(const float *in, float *out, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) out[y * cols + x] = in[y * cols + x];
}
""", LaunchConfig(GRID_2D, ("16", "16"))),
}


def _name(source: str) -> str:
    return source.split("void ", 1)[1].split("(", 1)[0].strip()


def _rewrites(case: str, device: DeviceLimits | None = None) -> list:
    source, launch, _ = MATCHES[case]
    return TiledPermutation().apply(ApplierInput(source, _name(source), launch, {}, device))


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_permutations_written_differently(case: str) -> None:
    _, _, (fast_in, fast_out) = MATCHES[case]
    rewrite = _rewrites(case)[0]  # the measured variant: 32x32 tiles, 32x8 threads
    assert "__shared__" in rewrite.source and "[32][33]" in rewrite.source
    assert rewrite.launch.block == ("32", "8")
    assert f"tile of ({fast_in}, {fast_out})" in rewrite.source


def test_3d_launch_strides_the_third_coordinate() -> None:
    source, launch, _ = MATCHES["permute_3d"]
    rewrite = TiledPermutation().apply(ApplierInput(source, "permute021", launch))[0]
    assert rewrite.launch.grid == ("(D2 + 31) / 32", "(D1 + 31) / 32", "min(D0, 65535)")
    assert "gridDim.z" in rewrite.source


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_offers_a_grid_of_tiles_and_blocks_after_the_measured_one(case: str) -> None:
    rewrites = _rewrites(case)
    assert rewrites[0].params == (("tile", 32), ("items", 4)) and rewrites[0].launch.block == ("32", "8")
    coordinates = [(dict(r.params)["tile"], int(r.launch.block[0]), int(r.launch.block[1])) for r in rewrites]
    assert len(set(coordinates)) == len(coordinates) == (5 if case == "rotation_90" else 13)  # a template: 32 only
    # the rest in the shared order (`appliers/grid.py`): by tile, elements per thread, then block
    keys = [(*(v for _, v in r.params), int(r.launch.block[0]), int(r.launch.block[1])) for r in rewrites]
    assert keys[1:] == sorted(keys[1:])
    assert len({(r.source, r.launch) for r in rewrites}) == len(rewrites)
    for rewrite, (tile, across, rows) in zip(rewrites, coordinates, strict=True):
        assert dict(rewrite.params)["items"] * across * rows == tile * tile
        assert f"[{tile}][{tile + 1}]" in rewrite.source and f"{tile}x{tile} shared tiles" in rewrite.note
        assert rewrite.launch.grid[0].endswith(f"/ {tile}") and across <= tile and rows <= tile


def test_the_grid_stays_within_the_device_and_the_static_shared_limit() -> None:
    small = DeviceLimits(sms=4, max_threads_per_sm=1024, max_threads_per_block=256, shared_bytes_per_block=49152)
    assert all(int(r.launch.block[0]) * int(r.launch.block[1]) <= 256 for r in _rewrites("textbook", small))
    assert len(_rewrites("textbook", small)) == 8
    # an element of unknown size (a template parameter) keeps to the 32-tile: [64][65] of a
    # 16-byte type would not fit 48 KiB
    assert {dict(r.params)["tile"] for r in _rewrites("rotation_90")} == {32}
    assert {dict(r.params)["tile"] for r in _rewrites("early_return_locals")} == {32, 64}  # doubles fit


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_leaves_near_misses_alone(case: str) -> None:
    source, launch = NEAR_MISSES[case]
    assert TiledPermutation().apply(ApplierInput(source, _name(source), launch)) == []


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_compile(case: str, tmp_path: Path) -> None:
    # every point of the grid, in one translation unit per kernel
    compile_together([r.source for r in _rewrites(case)], tmp_path, "grid")


# Red-team permutations at small odd sizes (not multiples of any tile): on the CPU (threads that
# wait at `__syncthreads`) the grid's rewrites give the original's values.
RED_TEAM_SIZES = {
    "transpose/rotate90_int": {"H": 71, "W": 45},
    "transpose/permute3d_021_zgrid": {"D0": 3, "D1": 37, "D2": 67},
    "transpose/transpose_batched_zgrid_double": {"rows": 67, "cols": 37, "batch": 2},
}


@needs_gxx
@pytest.mark.parametrize("case", sorted(RED_TEAM_SIZES))
def test_red_team_grid_gives_the_originals_values_on_the_cpu(case: str, tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_redteam_recognition import DATA, case_input

    _, given = case_input(case)
    spec = (DATA / f"{case}.regrapht.toml").read_text()
    rewrites = rewrites_of(TiledPermutation(), given)
    assert len(rewrites) == 13
    if case != "transpose/permute3d_021_zgrid":  # the whole grid of one; the others' corners
        rewrites = [rewrites[0], rewrites[1], rewrites[5], rewrites[-1]]
    assert_same_outputs(given.source, spec, rewrites, RED_TEAM_SIZES[case], tmp_path)
