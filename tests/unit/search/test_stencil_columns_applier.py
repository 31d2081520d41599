"""RegisterColumnStencil: 2-D stencils, 3-D stencils (2.5-D blocking), 3x3 and depthwise
convolutions (CHW and HWC), a cellular automaton and boundary-copying sweeps (`if (edge ||)
copy; else ...`, `if (edge ||) { copy; return; }`) written differently are coarsened down a
column with a register window; near-misses (in-place updates, data-dependent neighbours, a
radius that is a parameter, 1-D stencils whose march would be the contiguous coordinate) are
left alone; every rewrite compiles with nvcc, and its window stays in registers; on the CPU
(threads run in turn under AddressSanitizer) every rewrite gives the original's bits and loads
nothing the original does not."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from cpu_emulation import assert_rewrites_match, needs_gxx
from nvcc_check import compile_ok, needs_nvcc

from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits
from regrapht.search.appliers.stencil_columns import RegisterColumnStencil
from regrapht.spec.launch import LaunchConfig

GRID_2D = LaunchConfig(("(W + 15) / 16", "(H + 15) / 16"), ("16", "16"))

# case -> (source, launch, window loads per variant)
MATCHES = {
    "jacobi9_double": ("""
__global__ void jacobi9(const double *__restrict__ src, double *__restrict__ dst, int W, int H) {
    const int x = threadIdx.x + blockIdx.x * blockDim.x;
    const int y = threadIdx.y + blockIdx.y * blockDim.y;
    if (x < 1 || x > W - 2 || y < 1 || y > H - 2) return;
    double edge = src[(y - 1) * W + x] + src[(y + 1) * W + x] + src[y * W + x - 1] + src[y * W + x + 1];
    double corner = src[(y - 1) * W + x - 1] + src[(y - 1) * W + x + 1]
                  + src[(y + 1) * W + x - 1] + src[(y + 1) * W + x + 1];
    dst[y * W + x] = 0.5 * src[y * W + x] + 0.1 * edge + 0.025 * corner;
}
""", GRID_2D, (18, 30, 12)),
    "sobel_int_flat": ("""
__global__ void sobel(const int *img, int *mag, int rows, int cols) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= rows * cols) return;
    int c = p % cols;
    int r = p / cols;
    if (r > 0 && c > 0 && r < rows - 1 && c < cols - 1) {
    int gx = img[p - cols + 1] + 2 * img[p + 1] + img[p + cols + 1]
           - img[p - cols - 1] - 2 * img[p - 1] - img[p + cols - 1];
    int gy = img[p + cols - 1] + 2 * img[p + cols] + img[p + cols + 1]
           - img[p - cols - 1] - 2 * img[p - cols] - img[p - cols + 1];
    mag[p] = abs(gx) + abs(gy);
    } else {
        mag[p] = 0;
    }
}
""", LaunchConfig(("(rows * cols + 127) / 128",), ("128",)), (18, 30, 12)),
    "box27_3d_loops": ("""
__global__ void box27(const float *f, float *g, int nx, int ny, int nz) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.z * blockDim.z + threadIdx.z;
    if (i >= nx || j >= ny || k >= nz) return;
    float s = 0.0f;
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                int a = i + dx, b = j + dy, c = k + dz;
                if (a >= 0 && a < nx && b >= 0 && b < ny && c >= 0 && c < nz)
                    s += f[(c * ny + b) * nx + a];
            }
    g[(k * ny + j) * nx + i] = s / 27.0f;
}
""", LaunchConfig(("(nx + 31) / 32", "(ny + 3) / 4", "(nz + 3) / 4"), ("32", "4", "4")), (54, 90)),
    "heat7_3d_offsets": ("""
__global__ void heat7(const float *u, float *v, int nx, int ny, int nz, float alpha) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.z * blockDim.z + threadIdx.z;
    if (i > 0 && j > 0 && k > 0 && i < nx - 1 && j < ny - 1 && k < nz - 1) {
        int p = (k * ny + j) * nx + i;
        v[p] = u[p] + alpha * (u[p - 1] + u[p + 1] + u[p - nx] + u[p + nx] + u[p - nx * ny] + u[p + nx * ny]
                               - 6.0f * u[p]);
    }
}
""", LaunchConfig(("(nx + 31) / 32", "(ny + 3) / 4", "(nz + 3) / 4"), ("32", "4", "4")), (22, 42, 82)),
    "depthwise_hwc_3d_launch": ("""
__global__ void dw_hwc(const float *in, const float *filt, float *out, int H, int W, int C) {
    int ch = blockIdx.x * blockDim.x + threadIdx.x;
    int px = blockIdx.y * blockDim.y + threadIdx.y;
    int py = blockIdx.z;
    if (ch >= C || px >= W || py >= H) return;
    float acc = 0.0f;
    for (int u = 0; u < 3; u++) {
        int sy = py + u - 1;
        if (sy < 0 || sy >= H) continue;
        for (int v = 0; v < 3; v++) {
            int sx = px + v - 1;
            if (sx < 0 || sx >= W) continue;
            acc += in[(sy * W + sx) * C + ch] * filt[(u * 3 + v) * C + ch];
        }
    }
    out[(py * W + px) * C + ch] = acc;
}
""", LaunchConfig(("(C + 31) / 32", "(W + 7) / 8", "H"), ("32", "8", "1")), (54, 30, 18)),
    "depthwise_chw_slices": ("""
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
""", LaunchConfig(("(W + 15) / 16", "(H + 15) / 16", "C"), ("16", "16", "1")), (18, 30, 12)),
    "life_bytes": ("""
__global__ void life(const unsigned char *cur, unsigned char *nxt, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    int n = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            if (dx == 0 && dy == 0) continue;
            int xx = x + dx, yy = y + dy;
            if (xx >= 0 && xx < W && yy >= 0 && yy < H) n += cur[yy * W + xx];
        }
    nxt[y * W + x] = (n == 3 || (cur[y * W + x] && n == 2)) ? 1 : 0;
}
""", GRID_2D, (18, 30, 12)),
    "boundary_copy_else": ("""
__global__ void smooth(const float *a, float *b, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    if (x == 0 || y == 0 || x == W - 1 || y == H - 1)
        b[y * W + x] = a[y * W + x];
    else
        b[y * W + x] = 0.2f * (a[y * W + x] + a[y * W + x - 1] + a[y * W + x + 1] + a[(y - 1) * W + x]
                               + a[(y + 1) * W + x]);
}
""", GRID_2D, (14, 26, 8)),
    "boundary_copy_then_return": ("""
__global__ void heat_flat(const double *u, double *v, int NX, int NY, int NZ, double r) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= NX * NY * NZ) return;
    int x = id % NX;
    int y = (id / NX) % NY;
    int z = id / (NX * NY);
    if (x == 0 || y == 0 || z == 0 || x == NX - 1 || y == NY - 1 || z == NZ - 1) {
        v[id] = u[id];
        return;
    }
    v[id] = (1.0 - 6.0 * r) * u[id] + r * (u[id - 1] + u[id + 1] + u[id - NX] + u[id + NX] + u[id - NX * NY]
                                           + u[id + NX * NY]);
}
""", LaunchConfig(("(NX * NY * NZ + 255) / 256",), ("256",)), (22, 42, 82)),
    "depthwise_channel_from_the_grid": ("""
__global__ void dw(const float *in, const float *w, float *out, unsigned C, unsigned H, unsigned W) {
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned c = blockIdx.z;
    if (col >= W || row >= H) return;
    float acc = 0.0f;
    for (int ky = 0; ky < 3; ky++)
        for (int kx = 0; kx < 3; kx++) {
            int iy = (int)row + ky - 1, ix = (int)col + kx - 1;
            if (iy >= 0 && iy < (int)H && ix >= 0 && ix < (int)W)
                acc += in[(c * H + iy) * W + ix] * w[c * 9 + ky * 3 + kx];
        }
    out[(c * H + row) * W + col] = acc;
}
""", LaunchConfig(("(W + 15) / 16", "(H + 15) / 16", "C"), ("16", "16")), (18, 30, 12)),
}

NEAR_MISSES = {
    "in_place_update": ("""
__global__ void relax(float *a, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
        a[y * W + x] = 0.25f * (a[(y - 1) * W + x] + a[(y + 1) * W + x] + a[y * W + x - 1] + a[y * W + x + 1]);
}
""", GRID_2D),
    "data_dependent_neighbour": ("""
__global__ void flow(const float *in, const int *dir, float *out, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1) {
        int d = dir[y * W + x];
        out[y * W + x] = in[(y + d) * W + x] + in[y * W + x + d] + in[(y - d) * W + x];
    }
}
""", GRID_2D),
    "radius_parameter": ("""
__global__ void column_blur(const float *in, float *out, int W, int H, int r) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y < r || y >= H - r) return;
    float s = 0.0f;
    for (int d = -r; d <= r; ++d)
        s += in[(y + d) * W + x];
    out[y * W + x] = s / (2 * r + 1);
}
""", GRID_2D),
    "one_dimensional": ("""
__global__ void blur1d(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f;
}
""", LaunchConfig(("(n + 255) / 256",), ("256",))),
    "output_aliases_a_read": ("""
__global__ void shift_up(float *grid, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y + 1 < H) grid[y * W + x] = grid[(y + 1) * W + x] - grid[y * W + x];
}
""", GRID_2D),
}


def _name(source: str) -> str:
    return source.split("void ", 1)[1].split("(", 1)[0].strip()


def _rewrites(case: str) -> list:
    source, launch, _ = MATCHES[case]
    return RegisterColumnStencil().apply(ApplierInput(source, _name(source), launch))


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_coarsens_stencils_written_differently(case: str) -> None:
    rewrites = _rewrites(case)
    loads = MATCHES[case][2]
    assert [int(re.search(r"window of (\d+) loads", r.note).group(1)) for r in rewrites] == list(loads)
    for rewrite in rewrites:
        assert "__shared__" not in rewrite.source and "__syncthreads" not in rewrite.source
        # wide blocks when the contiguous coordinate has a halo (its sectors), 32x8 otherwise
        assert rewrite.launch.block in (("128", "2"), ("64", "4"), ("32", "8"))
        body = rewrite.source.split("{", 1)[1]
        # every window slot is loaded exactly once per column of points
        assert len(re.findall(r"win_rg(\[\d+\])+ = ", body)) == int(re.search(r"(\d+) loads", rewrite.note).group(1))


def test_2d_column_loads_each_row_once() -> None:
    four, eight, two = _rewrites("jacobi9_double")
    # 3 columns of (4 + 2) rows: 18 loads for 4 points (36 before), through the read-only path
    assert four.source.count("__ldg(&src[") == 18 and eight.source.count("__ldg(&src[") == 30
    assert two.source.count("__ldg(&src[") == 12
    # 128 x 2 threads of 4 rows: a block covers 128 columns and 8 rows
    assert four.launch.grid == ("(W - 2 + 1 + 127) / 128", "min((H - 2 + 1 + 7) / 8, 65535)")
    assert eight.launch.grid[1] == "min((H - 2 + 1 + 15) / 16, 65535)"
    assert two.launch.block == ("64", "4") and two.launch.grid[1] == "min((H - 2 + 1 + 7) / 8, 65535)"
    assert "gridDim.y" in four.source  # block rows past the grid limit are strided


def test_each_load_is_gated_by_the_bounds_of_the_reads_that_take_it() -> None:
    four = _rewrites("jacobi9_double")[0]
    # the top-left corner is taken only by the (-1, -1) read: its box, without implied bounds
    first = next(line for line in four.source.splitlines() if "win_rg[0][0] =" in line)
    assert first.count(">=") == 2 and first.count("<") == 2 and "||" not in first


def test_3d_marches_along_z_with_the_plane_from_the_window() -> None:
    rewrites = _rewrites("heat7_3d_offsets")
    assert [r.launch.grid[2] for r in rewrites] == ["min((nz - 1 + 3) / 4, 65535)", "min((nz - 1 + 7) / 8, 65535)",
                                                   "min((nz - 1 + 15) / 16, 65535)"]
    assert all("gridDim.z" in r.source for r in rewrites)
    # without a halo along the contiguous coordinate (HWC channels) the 32x8 block stays
    assert {r.launch.block for r in _rewrites("depthwise_hwc_3d_launch")} == {("32", "8")}


def test_keeps_each_outputs_operation_order() -> None:
    rewrite = _rewrites("jacobi9_double")[0]
    # the kernel's own expression, term for term, with the reads redirected to the window
    assert "double edge = win_rg[0][1] + win_rg[2][1] + win_rg[1][0] + win_rg[1][2];" in rewrite.source
    assert "dst[y * W + x] = 0.5 * win_rg[1][1] + 0.1 * edge + 0.025 * corner;" in rewrite.source


def test_a_channel_the_guard_does_not_bound_ranges_over_its_grid_extent() -> None:
    rewrite = _rewrites("depthwise_channel_from_the_grid")[0]
    assert rewrite.launch.grid[2] == "min(C, 65535)" and "c < C; c += gridDim.z" in rewrite.source


def test_weights_and_slices_stay_as_written() -> None:
    rewrite = _rewrites("depthwise_chw_slices")[0]
    assert "w[ch * 9 + (dy + 1) * 3 + dx + 1]" in rewrite.source
    assert rewrite.launch.grid[2] == "min(C, 65535)" and "gridDim.z" in rewrite.source
    # the points store between their reads: without __restrict__ every weight is reloaded per point
    assert "const float *__restrict__ w, float *__restrict__ y" in rewrite.source


def test_comes_before_the_halo_tile_in_the_rules_order() -> None:
    names = [type(a).__name__ for a in APPLIERS]
    assert names.index("RegisterColumnStencil") < names.index("HaloTiledStencil")


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_leaves_near_misses_alone(case: str) -> None:
    source, launch = NEAR_MISSES[case]
    assert RegisterColumnStencil().apply(ApplierInput(source, _name(source), launch)) == []


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_compile_with_the_window_in_registers(case: str, tmp_path: Path) -> None:
    for index, rewrite in enumerate(_rewrites(case)):
        compile_ok(rewrite.source, tmp_path, f"v{index}")
        path = tmp_path / f"v{index}.cu"
        done = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o", str(tmp_path / "v.cubin"),
                               str(path)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        # a window subscript the compiler could not make constant would put it on the stack
        assert "0 bytes stack frame" in done.stderr, done.stderr


# Small odd sizes for the CPU emulation: (scalars, element count per pointer)
CPU_SIZES: dict[str, tuple[dict[str, float | int], dict[str, int]]] = {
    "jacobi9_double": ({"W": 67, "H": 45}, {"src": 67 * 45, "dst": 67 * 45}),
    "sobel_int_flat": ({"rows": 41, "cols": 77}, {"img": 41 * 77, "mag": 41 * 77}),
    "box27_3d_loops": ({"nx": 37, "ny": 19, "nz": 23}, {"f": 37 * 19 * 23, "g": 37 * 19 * 23}),
    "heat7_3d_offsets": ({"nx": 37, "ny": 19, "nz": 23, "alpha": 0.1}, {"u": 37 * 19 * 23, "v": 37 * 19 * 23}),
    "depthwise_hwc_3d_launch": ({"H": 21, "W": 19, "C": 45}, {"in": 21 * 19 * 45, "filt": 9 * 45, "out": 21 * 19 * 45}),
    "depthwise_chw_slices": ({"C": 3, "H": 37, "W": 41}, {"x": 3 * 37 * 41, "w": 27, "y": 3 * 37 * 41}),
    "life_bytes": ({"W": 67, "H": 45}, {"cur": 67 * 45, "nxt": 67 * 45}),
    "boundary_copy_else": ({"W": 67, "H": 45}, {"a": 67 * 45, "b": 67 * 45}),
    "depthwise_channel_from_the_grid": ({"C": 5, "H": 37, "W": 41}, {"in": 5 * 37 * 41, "w": 45, "out": 5 * 37 * 41}),
    "boundary_copy_then_return": ({"NX": 37, "NY": 19, "NZ": 23, "r": 0.1}, {"u": 37 * 19 * 23, "v": 37 * 19 * 23}),
}


@needs_gxx
@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_give_the_same_bits_and_load_nothing_new_on_the_cpu(case: str, tmp_path: Path) -> None:
    source, launch, _ = MATCHES[case]
    scalars, counts = CPU_SIZES[case]
    assert_rewrites_match(source, _name(source), launch, _rewrites(case), scalars, counts, tmp_path)


def test_longer_columns_are_not_offered_when_they_would_leave_sms_idle() -> None:
    source, launch, _ = MATCHES["jacobi9_double"]
    big = DeviceLimits(sms=132, max_threads_per_sm=2048, max_threads_per_block=1024, shared_bytes_per_block=49152)

    def offered(W: int, H: int) -> list[str]:
        given = ApplierInput(source, _name(source), launch, {"W": W, "H": H}, big)
        return [r.note.split(" ", 1)[0] for r in RegisterColumnStencil().apply(given)]

    # 132 SMs x 8 blocks of 256 threads: 1056 blocks fill the device once
    assert offered(4096, 4096) == ["4", "8", "2"]  # 32 x 512, 32 x 256 and 64 x 512 blocks
    assert offered(1024, 256) == ["4"]  # the first always; 8 x 16 and 16 x 32 blocks would not fill it
    assert offered(4096, 4096) == [r.note.split(" ", 1)[0] for r in _rewrites("jacobi9_double")]
