"""HaloTiledStencil: 1-D/2-D/3-D stencils, 3x3 and depthwise convolutions and a cellular
automaton written differently are tiled with halos; near-misses (in-place updates, clamped or
data-dependent reads only, extra side effects, early returns in the work, launches that cover a
part) are left alone; every rewrite compiles with nvcc; on the CPU (`cuda_on_cpu.h`, threads that
wait at `__syncthreads`) the 3-D red-team stencils' rewrites compute what the originals do."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from cpu_cuda import assert_same_outputs, needs_gxx, spec_text
from nvcc_check import compile_together, needs_nvcc

from regrapht.search.appliers import ApplierInput, rewrites_of
from regrapht.search.appliers.stencil import HaloTiledStencil
from regrapht.spec.launch import LaunchConfig

GRID_2D = LaunchConfig(("(W + 15) / 16", "(H + 15) / 16"), ("16", "16"))

MATCHES = {
    "jacobi_5pt_interior": ("""
__global__ void jacobi(const float *in, float *out, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1) {
        out[y * W + x] = 0.25f * (in[(y - 1) * W + x] + in[(y + 1) * W + x] + in[y * W + x - 1] + in[y * W + x + 1]);
    }
}
""", LaunchConfig(("(W + 15) / 16", "(H + 15) / 16"), ("16", "16")), (1, 1)),
    "conv3x3_zero_padded": ("""
__global__ void conv3x3(const float *__restrict__ img, const float *__restrict__ k, float *__restrict__ res,
                        int W, int H) {
    const int col = threadIdx.x + blockIdx.x * blockDim.x;
    const int row = threadIdx.y + blockIdx.y * blockDim.y;
    if (col >= W || row >= H) return;
    float acc = 0.0f;
    for (int ky = 0; ky < 3; ++ky) {
        for (int kx = 0; kx < 3; ++kx) {
            int iy = row + ky - 1;
            int ix = col + kx - 1;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                acc += img[iy * W + ix] * k[ky * 3 + kx];
        }
    }
    res[row * W + col] = acc;
}
""", GRID_2D, (1, 1)),
    "stencil_1d_radius": ("""
#define RADIUS 3
__global__ void blur1d(const double *in, double *out, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < RADIUS || i >= n - RADIUS) return;
    double s = 0.0;
    for (int d = -RADIUS; d <= RADIUS; d++)
        s += in[i + d];
    out[i] = s / (2 * RADIUS + 1);
}
""", LaunchConfig(("(n + 255) / 256",), ("256",)), (3, 3)),
    "heat_3d_7pt": ("""
__global__ void heat3d(const float *u, float *v, int nx, int ny, int nz, float c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.z * blockDim.z + threadIdx.z;
    if (i > 0 && j > 0 && k > 0 && i < nx - 1 && j < ny - 1 && k < nz - 1) {
        int p = (k * ny + j) * nx + i;
        v[p] = u[p] + c * (u[p - 1] + u[p + 1] + u[p - nx] + u[p + nx] + u[p - nx * ny] + u[p + nx * ny] - 6.0f * u[p]);
    }
}
""", LaunchConfig(("(nx + 31) / 32", "(ny + 3) / 4", "(nz + 3) / 4"), ("32", "4", "4")), (1, 1)),
    "depthwise_conv": ("""
__global__ void depthwise(const float *x, const float *w, float *y, int C, int H, int W) {
    int ow = blockIdx.x * blockDim.x + threadIdx.x;
    int oh = blockIdx.y * blockDim.y + threadIdx.y;
    int ch = blockIdx.z;
    if (ow < W && oh < H && ch < C) {
        float s = 0.f;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int yy = oh + dy, xx = ow + dx;
                if (yy >= 0 && yy < H && xx >= 0 && xx < W)
                    s += x[(ch * H + yy) * W + xx] * w[ch * 9 + (dy + 1) * 3 + dx + 1];
            }
        y[(ch * H + oh) * W + ow] = s;
    }
}
""", LaunchConfig(("(W + 15) / 16", "(H + 15) / 16", "C"), ("16", "16", "1")), (1, 1)),
    "life_step_interior": ("""
__global__ void life(const int *cur, int *next, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1) return;
    int alive = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            if (dx == 0 && dy == 0) continue;
            alive += cur[(y + dy) * W + (x + dx)];
        }
    int me = cur[y * W + x];
    next[y * W + x] = (alive == 3 || (alive == 2 && me)) ? 1 : 0;
}
""", GRID_2D, (1, 1)),
    "blur_flat_index": ("""
__global__ void box3(const float *a, float *b, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows * cols) return;
    int x = i % cols, y = i / cols;
    if (x > 0 && y > 0 && x < cols - 1 && y < rows - 1)
        b[i] = (a[i - 1] + a[i + 1] + a[i - cols] + a[i + cols] + a[i]) * 0.2f;
    else
        b[i] = a[i];
}
""", LaunchConfig(("(rows * cols + 255) / 256",), ("256",)), (1, 1)),
    "conv3x3_continue_padding": ("""
__global__ void conv_skip(const float *in, const float *wt, float *out, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int ky = 0; ky < 3; ++ky) {
        int iy = y + ky - 1;
        if (iy < 0 || iy >= h) continue;
        for (int kx = 0; kx < 3; ++kx) {
            int ix = x + kx - 1;
            if (ix < 0 || ix >= w) continue;
            acc += in[iy * w + ix] * wt[ky * 3 + kx];
        }
    }
    out[y * w + x] = acc;
}
""", LaunchConfig(("(w + 15) / 16", "(h + 15) / 16"), ("16", "16")), (1, 1)),
}

NEAR_MISSES = {
    "continue_on_data": ("""
__global__ void conv_sparse(const float *in, const float *wt, float *out, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) {
            if (wt[ky * 3 + kx] == 0.0f) continue;
            acc += in[(y + ky - 1) * w + x + kx - 1] * wt[ky * 3 + kx];
        }
    out[y * w + x] = acc;
}
""", LaunchConfig(("(w + 15) / 16", "(h + 15) / 16"), ("16", "16"))),
    "csr_row_range": ("""
__global__ void spmv(const int *rowptr, const int *col, const float *val, const float *x, float *y, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int j = rowptr[r]; j < rowptr[r + 1]; j++) s += val[j] * x[col[j]];
        y[r] = s;
    }
}
""", LaunchConfig(("(rows + 255) / 256",), ("256",))),
    "in_place": ("""
__global__ void smooth_inplace(float *a, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
        a[y * W + x] = 0.5f * (a[y * W + x - 1] + a[y * W + x + 1]);
}
""", GRID_2D),
    "clamped_reads_only": ("""
__global__ void blur_clamped(const float *in, float *out, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) {
        int xl = max(x - 1, 0), xr = min(x + 1, W - 1);
        out[y * W + x] = (in[y * W + xl] + in[y * W + xr]) * 0.5f;
    }
}
""", GRID_2D),
    "data_dependent_reads": ("""
__global__ void gather_blur(const float *in, const int *nbr, float *out, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) out[y * W + x] = in[nbr[y * W + x]] + in[nbr[y * W + x] + 1];
}
""", GRID_2D),
    "extra_side_effect": ("""
__global__ void jacobi_count(const float *in, float *out, unsigned *hits, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1) {
        out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1];
        atomicAdd(hits, 1u);
    }
}
""", GRID_2D),
    "early_return_in_work": ("""
__global__ void jacobi_skip(const float *in, float *out, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1) {
        if (in[y * W + x] > 1.0f) return;
        out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1];
    }
}
""", GRID_2D),
    "launch_covers_a_part": ("""
__global__ void jacobi(const float *in, float *out, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
        out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1];
}
""", LaunchConfig(("(W + 15) / 16", "8"), ("16", "16"))),
    "pointwise_map": ("""
__global__ void scale2d(const float *in, float *out, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) out[y * W + x] = 2.0f * in[y * W + x];
}
""", GRID_2D),
}


def _name(source: str) -> str:
    return source.split("void ", 1)[1].split("(", 1)[0].strip()


def _all_rewrites(case: str) -> list:
    source, launch, _ = MATCHES[case]
    return HaloTiledStencil().apply(ApplierInput(source, _name(source), launch))


def _rewrites(case: str) -> list:
    """The measured tilings, offered first: one point per thread, then a taller tile."""
    return _all_rewrites(case)[:2]


def _rewrite(case: str):
    """The first variant: one point per thread."""
    return _rewrites(case)[0]


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_tiles_stencils_written_differently(case: str) -> None:
    rewrites = _rewrites(case)
    assert len(rewrites) == 2  # one point per thread, then several sharing a taller tile
    for rewrite in rewrites:
        assert "__shared__" in rewrite.source and "__syncthreads();" in rewrite.source
        assert f"halo of [{MATCHES[case][2]}" in rewrite.note


def test_conv_loads_only_what_the_kernel_reads() -> None:
    rewrite = _rewrite("conv3x3_zero_padded")
    # the read's own zero-padding bounds gate the tile load: nothing below 0 or past W/H
    assert ">= 0" in rewrite.source and "< H" in rewrite.source and "< W" in rewrite.source
    assert "k[ky * 3 + kx]" in rewrite.source  # the weights stay global


def test_depthwise_loops_over_channels_in_grid_z() -> None:
    rewrite = _rewrite("depthwise_conv")
    assert rewrite.launch.grid == ("(W + 31) / 32", "(H + 7) / 8", "min(C, 65535)")
    assert _rewrites("depthwise_conv")[1].launch.grid == ("(W + 31) / 32", "(H + 31) / 32", "min(C, 65535)")
    assert "gridDim.z" in rewrite.source


def test_3d_uses_a_3d_tile() -> None:
    one, several = _rewrites("heat_3d_7pt")
    assert "[4][10][34]" in one.source and "[10][10][34]" in several.source
    assert one.launch.block == several.launch.block == ("32", "8")


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_offers_a_grid_of_tiles_and_blocks_after_the_measured_tilings(case: str) -> None:
    rewrites = _all_rewrites(case)
    assert rewrites[:2] == _rewrites(case)
    n = len(rewrites[0].launch.grid) if case != "depthwise_conv" else 2
    tiles = [tuple(v for _, v in r.params) for r in rewrites]
    assert all([name for name, _ in r.params] == ["tile_x", "tile_y", "tile_z"][:n] for r in rewrites)
    assert [r.note.split(" ", 1)[0] for r in rewrites] == ["x".join(map(str, t)) for t in tiles]
    coordinates = [(t, tuple(map(int, r.launch.block))) for t, r in zip(tiles, rewrites, strict=True)]
    assert len(set(coordinates)) == len(coordinates) and coordinates[2:] == sorted(coordinates[2:])
    assert len({(r.source, r.launch) for r in rewrites}) == len(rewrites)
    for tile, block in coordinates:  # no thread idle in the work phase, at most 256 a block
        assert block[0] <= tile[0] and (n == 1 or block[1] <= tile[1]) and block[0] * (block[1:] or (1,))[0] <= 256
    assert 12 <= len(rewrites) <= 32


def test_the_grid_keeps_the_tile_within_the_shared_budget() -> None:
    # 3-D doubles: the 64 x 8 x 8 and 32 x 16 x 8 tiles with their halos (52800 and 48960 bytes) are past 40 KiB
    source = MATCHES["heat_3d_7pt"][0].replace("float", "double")
    rewrites = HaloTiledStencil().apply(ApplierInput(source, _name(source), MATCHES["heat_3d_7pt"][1]))
    tiles = {tuple(v for _, v in r.params) for r in rewrites}
    assert (64, 8, 4) in tiles and (32, 16, 4) in tiles and not {(64, 8, 8), (32, 16, 8)} & tiles


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_leaves_near_misses_alone(case: str) -> None:
    source, launch = NEAR_MISSES[case]
    assert HaloTiledStencil().apply(ApplierInput(source, _name(source), launch)) == []


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_compile(case: str, tmp_path: Path) -> None:
    # every point of the grid, in one translation unit per kernel
    compile_together([r.source for r in _all_rewrites(case)], tmp_path, "grid")


def test_a_bound_on_the_point_moved_by_a_constant_keeps_every_read() -> None:
    source = """
#define R 2
__global__ void d2(const float *f, float *g, unsigned int n) {
    unsigned int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    if (i >= R && i + R < n)
        g[i] = f[i - 2] + f[i - 1] - 2.0f * f[i] + f[i + 1] + f[i + 2];
    else
        g[i] = f[i];
}
"""
    rewrites = HaloTiledStencil().apply(ApplierInput(source, "d2", LaunchConfig(("(n + 255) / 256",), ("256",))))
    assert rewrites and "halo of [(2, 2)]" in rewrites[0].note
    # `i + R < n` read as `i < n - 2`, moved by each read's offset: f[i + 2] loads below n, f[i - 1] below n - 3
    assert "(n) + (0)" in rewrites[0].source and "(n) + (-3)" in rewrites[0].source


# 3-D red-team stencils at small odd sizes (scalar overrides of their specs). The third
# coordinate is `l` in two of them: its tile origin and the tile's first counter were both
# named `l0_rg`, the counter shadowed the origin, and every plane was read from the wrong place.
RED_TEAM_3D = {
    "stencil/heat3d_3d_launch": {"nx": 13, "ny": 11, "nz": 9},
    "stencil/heat3d_7pt_unsigned_cube": {"n": 13},
    "stencil/heat3d_clamped_insulated": {"nx": 13, "ny": 11, "nz": 9},
    "stencil/heat3d_flat_divmod": {"NX": 13, "NY": 11, "NZ": 9},
    "stencil/heat3d_i_plus_nx_order": {"nx": 13, "ny": 11, "nz": 9},
    "stencil/heat3d_macro_index": {"nx": 13, "ny": 11, "nz": 9},
    "stencil/heat3d_size_t_strides": {"nx": 13, "ny": 11, "nz": 9},
    "stencil/heat3d_z_loop": {"nx": 13, "ny": 11, "nz": 9},
}


@needs_gxx
@pytest.mark.parametrize("case", sorted(RED_TEAM_3D))
def test_red_team_3d_rewrites_compute_the_originals_values_on_the_cpu(case: str, tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_redteam_recognition import DATA, case_input

    _, given = case_input(case)
    spec = (DATA / f"{case}.regrapht.toml").read_text()
    rewrites = rewrites_of(HaloTiledStencil(), given)
    assert [r.note.split(" ", 1)[0] for r in rewrites[:2]] == ["32x8x2", "32x8x8"]
    # the whole grid of one kernel; the measured tilings and a sample of the grid of the others
    if case != "stencil/heat3d_3d_launch":
        rewrites = rewrites[:2] + rewrites[2::7]
    assert_same_outputs(given.source, spec, rewrites, RED_TEAM_3D[case], tmp_path)


# A 1-D and a 2-D red-team stencil: every point of the grid (tile shapes and blocks) on the CPU.
RED_TEAM_GRID = {
    "stencil/blur1d_r2_early_return": {"n": 4099},
    "stencil/box9_2d_loops_double": {"w": 133, "h": 69},
}


@needs_gxx
@pytest.mark.parametrize("case", sorted(RED_TEAM_GRID))
def test_red_team_grid_computes_the_originals_values_on_the_cpu(case: str, tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_redteam_recognition import DATA, case_input

    _, given = case_input(case)
    spec = (DATA / f"{case}.regrapht.toml").read_text()
    rewrites = rewrites_of(HaloTiledStencil(), given)
    assert len(rewrites) >= 12
    assert_same_outputs(given.source, spec, rewrites, RED_TEAM_GRID[case], tmp_path)


def test_generated_names_stay_distinct_when_a_coordinate_is_named_like_a_counter() -> None:
    source = """
__global__ void h(const float *a, float *b, int nx, int ny, int nz) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int l = blockIdx.z * blockDim.z + threadIdx.z;
    if (g < 1 || j < 1 || l < 1 || g >= nx - 1 || j >= ny - 1 || l >= nz - 1) return;
    b[(l * ny + j) * nx + g] = a[(l * ny + j) * nx + g - 1] + a[(l * ny + j) * nx + g + 1]
        + a[(l * ny + j - 1) * nx + g] + a[(l * ny + j + 1) * nx + g] + a[((l - 1) * ny + j) * nx + g]
        + a[((l + 1) * ny + j) * nx + g];
}
"""
    launch = LaunchConfig(("(nx + 31) / 32", "(ny + 3) / 4", "(nz + 3) / 4"), ("32", "4", "4"))
    one = HaloTiledStencil().apply(ApplierInput(source, "h", launch))[0]
    declared = re.findall(r"(?:const int|for \(int) (\w+) =", one.source)
    assert len(set(declared)) == 9, declared  # 3 origins, 3 counters, 3 positions: none shared


# A batch loop around the whole work with every launch axis taken (the channel on blockIdx.z):
# no march can take it, so it is kept as a loop around each rewritten iteration
# (`idioms/kept_loops.py`), by both stencil appliers.
BATCHED_JACOBI = """
__global__ void jacobi_batched(const double *u, double *v, int nb, int C, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.z;
    if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1) return;
    for (int b = 0; b < nb; ++b) {
        const int at = ((b * C + c) * H + y) * W + x;
        v[at] = 0.25 * (u[at - W] + u[at + W] + u[at - 1] + u[at + 1]);
    }
}
"""
BATCHED_JACOBI_LAUNCH = LaunchConfig(("(W + 15) / 16", "(H + 15) / 16", "C"), ("16", "16"))


def _kept_loop_inputs() -> list[tuple[str, ApplierInput, str, dict[str, int]]]:
    """(the loop's header, the input, its spec, small odd sizes for the CPU emulation)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_redteam_recognition import DATA, case_input

    _, red_team = case_input("conv/dw_macro_nchw")
    jacobi = spec_text("jacobi_batched", list(BATCHED_JACOBI_LAUNCH.grid), list(BATCHED_JACOBI_LAUNCH.block), [
        ("u", "const double*", "nb * C * H * W", ""), ("v", "double*", "nb * C * H * W", "out"),
        ("nb", "int", "4", ""), ("C", "int", "8", ""), ("H", "int", "64", ""), ("W", "int", "64", "")])
    return [
        ("for (int n = 0; n < N; n++)", red_team, (DATA / "conv/dw_macro_nchw.regrapht.toml").read_text(),
         {"N": 3, "C": 3, "H": 9, "W": 11}),
        ("for (int b = 0; b < nb; ++b)", ApplierInput(BATCHED_JACOBI, "jacobi_batched", BATCHED_JACOBI_LAUNCH), jacobi,
         {"nb": 3, "C": 2, "H": 13, "W": 37}),
    ]


def _stencil_appliers() -> list:
    from regrapht.search.appliers.stencil_columns import RegisterColumnStencil

    return [HaloTiledStencil(), RegisterColumnStencil()]


def test_a_batch_loop_no_launch_axis_can_take_is_kept_around_each_iteration() -> None:
    for header, given, _, _ in _kept_loop_inputs():
        signature = re.search(r"__global__ void \w+\([^)]*\)", given.source)
        assert signature is not None
        for applier in _stencil_appliers():
            rewrites = rewrites_of(applier, given)
            assert rewrites, (given.kernel, applier)
            for rewrite in rewrites:
                assert signature.group(0).replace("const", "") in rewrite.source.replace("__restrict__ ", "") \
                    .replace("const", ""), rewrite.source  # the original parameters, no counter added
                assert rewrite.source.count(header) == 1 and "no launch axis is free" in rewrite.note
                # a tile is refilled by the next iteration: a barrier first; registers need none
                refill = "__syncthreads();  // the next iteration refills the shared memory"
                assert (refill in rewrite.source) == ("__shared__" in rewrite.source)


@needs_gxx
def test_a_kept_batch_loop_gives_the_originals_bits_on_the_cpu(tmp_path: Path) -> None:
    for number, (_, given, spec, sizes) in enumerate(_kept_loop_inputs()):
        for applier in _stencil_appliers():
            rewrites = rewrites_of(applier, given)
            # the measured variants and a sample of the grid
            where = tmp_path / f"{number}_{applier.__class__.__name__}"
            where.mkdir()
            assert_same_outputs(given.source, spec, rewrites[:3] + rewrites[3::9], sizes, where)


@pytest.mark.nvcc
@needs_nvcc
def test_kept_batch_loop_rewrites_compile(tmp_path: Path) -> None:
    given = ApplierInput(BATCHED_JACOBI, "jacobi_batched", BATCHED_JACOBI_LAUNCH)
    for applier in _stencil_appliers():
        compile_together([r.source for r in rewrites_of(applier, given)], tmp_path, applier.__class__.__name__)


# One change to the batched kernel above that makes keeping the loop wrong (or not provably right):
# neither applier rewrites it.
KEPT_LOOP_NEAR_MISSES = [
    # the trip count read from memory, per channel (threads of a block would disagree: barriers)
    ("for (int b = 0; b < nb; ++b)", "for (int b = 0; b < (int)u[c]; ++b)"),
    # ... starting where the thread is
    ("for (int b = 0; b < nb; ++b)", "for (int b = threadIdx.x & 1; b < nb; ++b)"),
    # a value carried from one image to the next (the rewrite would reset it every iteration)
    ("for (int b = 0; b < nb; ++b) {\n        const int at = ((b * C + c) * H + y) * W + x;\n        v[at] =",
     "double carry = 0.0;\n    for (int b = 0; b < nb; ++b) {\n        const int at = ((b * C + c) * H + y) * W + x;\n"
     "        carry += u[at];\n        v[at] = carry +"),
    # the counter also moved by the data
    ("const int at = ((b * C + c) * H + y) * W + x;",
     "const int at = ((b * C + c) * H + y) * W + x;\n        b += u[at] > 0.9;"),
    # a data-dependent exit from the batch loop
    ("const int at = ((b * C + c) * H + y) * W + x;",
     "const int at = ((b * C + c) * H + y) * W + x;\n        if (u[at] > 0.9) break;"),
    # a side effect before the loop (once per thread; the rewrite would repeat it per image)
    ("    for (int b = 0; b < nb; ++b) {", "    if (x == 1 && y == 1) v[c] = 0.0;\n    for (int b = 0; b < nb; ++b) {"),
    # every image writes the same element (kept only when one point's iterations write distinct elements)
    ("v[at] =", "v[(c * H + y) * W + x] ="),
    # the counter is also a parameter's name (the derived kernel could not take it as one)
    ("int nb, int C, int H, int W)", "int nb, int C, int H, int W, int b)"),
]


@pytest.mark.parametrize("old,new", KEPT_LOOP_NEAR_MISSES)
def test_kept_loop_near_misses_are_left_alone(old: str, new: str) -> None:
    assert old in BATCHED_JACOBI, old
    given = ApplierInput(BATCHED_JACOBI.replace(old, new), "jacobi_batched", BATCHED_JACOBI_LAUNCH)
    for applier in _stencil_appliers():
        assert rewrites_of(applier, given) == [], (new, applier)
