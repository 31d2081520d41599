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
import sys
from pathlib import Path

import pytest
from cpu_emulation import assert_rewrites_match, needs_gxx
from nvcc_check import compile_together, needs_nvcc

from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, rewrites_of
from regrapht.search.appliers.stencil_columns import RegisterColumnStencil
from regrapht.spec.launch import LaunchConfig

GRID_2D = LaunchConfig(("(W + 15) / 16", "(H + 15) / 16"), ("16", "16"))
GRID_2D_NAMED = LaunchConfig(("(n + 15) / 16", "(steps + 15) / 16"), ("16", "16"))

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
    "march_z_from_a_2d_launch": ("""
__global__ void heat_march(const float *in, float *out, int nx, int ny, int nz, float c0, float c1) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x > nx - 2 || y > ny - 2) return;
    int plane = nx * ny;
    for (int z = 1; z < nz - 1; z++) {
        int p = z * plane + y * nx + x;
        out[p] = c0 * in[p] + c1 * (in[p - 1] + in[p + 1] + in[p - nx] + in[p + nx] + in[p - plane] + in[p + plane]);
    }
}
""", LaunchConfig(("(nx + 31) / 32", "(ny + 7) / 8"), ("32", "8")), (22, 42, 82)),
    "grid_stride_2d_interior": ("""
__global__ void jacobi_gs(const float *u, float *un, int nx, int ny) {
    const int stride_y = blockDim.y * gridDim.y;
    for (int y = blockIdx.y * blockDim.y + threadIdx.y + 1; y < ny - 1; y += stride_y) {
        for (int x = blockIdx.x * blockDim.x + threadIdx.x + 1; x < nx - 1; x += gridDim.x * blockDim.x) {
            un[y * nx + x] = 0.25f * (u[y * nx + (x - 1)] + u[y * nx + (x + 1)] + u[(y - 1) * nx + x] + u[(y + 1) * nx + x]);
        }
    }
}
""", LaunchConfig(("3", "2"), ("16", "4")), (14, 26, 8)),
    # the marched coordinate named `t`: its column start `t0` must not take the name of the
    # first coordinate's position (`t0` too); it did, and the window read the wrong rows
    "march_coordinate_named_t": ("""
__global__ void diffuse(const float *u, float *v, int n, int steps) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int t = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || t < 1 || x >= n - 1 || t >= steps - 1) return;
    v[t * n + x] = 0.5f * u[t * n + x] + 0.125f * (u[t * n + x - 1] + u[t * n + x + 1] + u[(t - 1) * n + x] + u[(t + 1) * n + x]);
}
""", GRID_2D_NAMED, (14, 26, 8)),
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
    # a march whose iterations see each other: a value carried from one plane to the next
    "march_carries_a_value": ("""
__global__ void carry(const float *in, float *out, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x > nx - 2 || y > ny - 2) return;
    float below = 0.0f;
    for (int z = 1; z < nz - 1; z++) {
        int p = (z * ny + y) * nx + x;
        out[p] = below + in[p - 1] + in[p + 1] + in[p - nx] + in[p + nx];
        below = in[p];
    }
}
""", LaunchConfig(("(nx + 15) / 16", "(ny + 15) / 16"), ("16", "16"))),
    # ... a range read from memory
    "march_data_dependent_range": ("""
__global__ void columns(const float *in, const int *depth, float *out, int nx, int ny) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x > nx - 2 || y > ny - 2) return;
    for (int z = 1; z < depth[y * nx + x]; z++) {
        int p = (z * ny + y) * nx + x;
        out[p] = in[p - 1] + in[p + 1] + in[p - nx] + in[p + nx] + in[p - nx * ny];
    }
}
""", LaunchConfig(("(nx + 15) / 16", "(ny + 15) / 16"), ("16", "16"))),
    # ... every plane written to one output plane (the last one wins in the original)
    "march_overwrites_one_plane": ("""
__global__ void last_plane(const float *in, float *out, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x > nx - 2 || y > ny - 2) return;
    for (int z = 1; z < nz - 1; z++) {
        int p = (z * ny + y) * nx + x;
        out[y * nx + x] = in[p - 1] + in[p + 1] + in[p - nx] + in[p + nx] + in[p + nx * ny];
    }
}
""", LaunchConfig(("(nx + 15) / 16", "(ny + 15) / 16"), ("16", "16"))),
    # ... a range that starts at the thread's own coordinate
    "march_from_the_thread": ("""
__global__ void tri(const float *in, float *out, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x > nx - 2 || y > ny - 2) return;
    for (int z = x; z < nz - 1; z++) {
        int p = (z * ny + y) * nx + x;
        out[p] = in[p - 1] + in[p + 1] + in[p - nx] + in[p + nx] + in[p - nx * ny];
    }
}
""", LaunchConfig(("(nx + 15) / 16", "(ny + 15) / 16"), ("16", "16"))),
    # a stride that is the block, not the grid: every block visits every row
    "grid_stride_by_the_block": ("""
__global__ void blockwise(const float *u, float *un, int nx, int ny) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < 1 || x >= nx - 1) return;
    for (int y = blockIdx.y * blockDim.y + threadIdx.y + 1; y < ny - 1; y += blockDim.y)
        un[y * nx + x] = 0.25f * (u[y * nx + x - 1] + u[y * nx + x + 1] + u[(y - 1) * nx + x] + u[(y + 1) * nx + x]);
}
""", LaunchConfig(("(nx + 31) / 32", "4"), ("32", "8"))),
    # grid-stride rows that write one row of a narrower output (rows overlap: `y * 8 + x` with x < nx)
    "grid_stride_overlapping_rows": ("""
__global__ void overlap(const float *u, float *un, int nx, int ny) {
    for (int y = blockIdx.y * blockDim.y + threadIdx.y + 1; y < ny - 1; y += blockDim.y * gridDim.y)
        for (int x = blockIdx.x * blockDim.x + threadIdx.x + 1; x < nx - 1; x += blockDim.x * gridDim.x)
            un[y * 8 + x] = u[y * nx + x - 1] + u[y * nx + x + 1] + u[(y - 1) * nx + x] + u[(y + 1) * nx + x];
}
""", LaunchConfig(("4", "4"), ("32", "8"))),
    # guard bounds through a local that depends on the thread (a triangle, not a box)
    "guard_bound_from_the_thread": ("""
__global__ void tri(const float *in, float *out, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int lim = x + 2;
    if (x < 1 || y < 1 || x >= W - 1 || y >= lim) return;
    out[y * W + x] = in[(y - 1) * W + x] + in[(y + 1) * W + x] + in[y * W + x - 1] + in[y * W + x + 1];
}
""", GRID_2D),
    # ... on a sum of two coordinates (`x + 1 >= W` is a moved coordinate, `x + y >= W` is not)
    "guard_on_a_sum_of_coordinates": ("""
__global__ void diag(const float *in, float *out, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x + y >= W - 1 || y + 1 >= H) return;
    out[y * W + x] = in[(y - 1) * W + x] + in[(y + 1) * W + x] + in[y * W + x - 1] + in[y * W + x + 1];
}
""", GRID_2D),
    # ... an equality that is not the lower end (`x == 1` leaves x == 0 in the domain)
    "guard_equality_off_the_edge": ("""
__global__ void edge(const float *in, float *out, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x == 1 || y == 0 || x >= W - 1 || y >= H - 1) return;
    out[y * W + x] = in[(y - 1) * W + x] + in[(y + 1) * W + x] + in[y * W + x - 1] + in[y * W + x + 1];
}
""", GRID_2D),
    # neighbours clamped to a range the point itself can leave (`max(x - 1, 1)` with x >= 0)
    "clamp_inside_the_domain": ("""
__global__ void inner_clamp(const float *in, float *out, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    int xm = max(x - 1, 1), xp = min(x + 1, W - 2), ym = max(y - 1, 1), yp = min(y + 1, H - 2);
    out[y * W + x] = in[y * W + xm] + in[y * W + xp] + in[ym * W + x] + in[yp * W + x] - 4.0f * in[y * W + x];
}
""", GRID_2D),
    # ... `max` on unsigned coordinates wraps at 0 (x - 1 is huge): no clamp
    "clamp_unsigned_max": ("""
__global__ void wraps(const float *in, float *out, unsigned W, unsigned H) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    unsigned xm = max(x - 1, 0u), xp = min(x + 1, W - 1), ym = max(y - 1, 0u), yp = min(y + 1, H - 1);
    out[y * W + x] = in[y * W + xm] + in[y * W + xp] + in[ym * W + x] + in[yp * W + x] - 4.0f * in[y * W + x];
}
""", GRID_2D),
    # ... a bound read from memory
    "clamp_to_a_loaded_bound": ("""
__global__ void loaded(const float *in, const int *edge, float *out, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    int xm = max(x - 1, edge[0]), xp = min(x + 1, W - 1), ym = max(y - 1, edge[1]), yp = min(y + 1, H - 1);
    out[y * W + x] = in[y * W + xm] + in[ym * W + x] - 2.0f * in[y * W + x];
}
""", GRID_2D),
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


def _all_rewrites(case: str) -> list:
    source, launch, _ = MATCHES[case]
    return RegisterColumnStencil().apply(ApplierInput(source, _name(source), launch))


def _rewrites(case: str) -> list:
    """The measured variants, offered first (one per entry of the case's window loads)."""
    return _all_rewrites(case)[: len(MATCHES[case][2])]


def _sample(case: str) -> list:
    """The measured variants and the grid's first, middle and last other points."""
    measured, rest = _rewrites(case), _all_rewrites(case)[len(MATCHES[case][2]):]
    return measured + [rest[0], rest[len(rest) // 2], rest[-1]]


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


@pytest.mark.parametrize("case", sorted(MATCHES))
def test_offers_a_grid_of_points_and_blocks_after_the_measured_variants(case: str) -> None:
    rewrites, measured = _all_rewrites(case), _rewrites(case)
    assert rewrites[: len(measured)] == measured
    points = [dict(r.params)["points"] for r in rewrites]
    assert [r.note.split(" ", 1)[0] for r in rewrites] == [str(p) for p in points]
    # every point of the grid once (windows past the register budget left out), the rest in order
    coordinates = [(p, tuple(map(int, r.launch.block))) for p, r in zip(points, rewrites, strict=True)]
    assert len(set(coordinates)) == len(coordinates) and len({(r.source, r.launch) for r in rewrites}) == len(rewrites)
    assert coordinates[len(measured):] == sorted(coordinates[len(measured):])
    assert set(points) <= {2, 4, 8, 16} and all(int(r.launch.block[0]) * int(r.launch.block[1]) <= 256 for r in rewrites)
    assert len(rewrites) >= 12


def test_the_grid_keeps_the_window_within_registers() -> None:
    # 3 x 3 neighbourhood: all 28 points; a 27-point box: 16 points would load 162 elements
    assert len(_all_rewrites("jacobi9_double")) == 28
    assert {dict(r.params)["points"] for r in _all_rewrites("box27_3d_loops")} == {2, 4, 8}


def test_the_grid_stays_within_the_devices_block_limit() -> None:
    source, launch, _ = MATCHES["jacobi9_double"]
    small = DeviceLimits(sms=4, max_threads_per_sm=1024, max_threads_per_block=128, shared_bytes_per_block=49152)
    rewrites = RegisterColumnStencil().apply(ApplierInput(source, _name(source), launch, {}, small))
    # the measured variants are kept as they are; the rest of the grid fits the device
    assert all(int(r.launch.block[0]) * int(r.launch.block[1]) <= 128 for r in rewrites[3:]) and len(rewrites) == 3 + 12


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_compile_with_the_window_in_registers(case: str, tmp_path: Path) -> None:
    # the whole grid of a 2-D and a 3-D stencil; the measured variants and a sample of the others
    rewrites = _all_rewrites(case) if case in ("jacobi9_double", "heat7_3d_offsets") else _sample(case)
    sources = [r.source for r in rewrites]
    reports = "\n".join(compile_together(sources, tmp_path, "grid", verbose=True))
    # a window subscript the compiler could not make constant would put it on the stack
    frames = re.findall(r"(\d+) bytes stack frame", reports)
    assert len(frames) == len(set(sources)) and set(frames) == {"0"}, reports


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
    "march_z_from_a_2d_launch": ({"nx": 37, "ny": 19, "nz": 23, "c0": 0.4, "c1": 0.1},
                                 {"in": 37 * 19 * 23, "out": 37 * 19 * 23}),
    "grid_stride_2d_interior": ({"nx": 67, "ny": 45}, {"u": 67 * 45, "un": 67 * 45}),
    "march_coordinate_named_t": ({"n": 37, "steps": 45}, {"u": 37 * 45, "v": 37 * 45}),
}


@needs_gxx
@pytest.mark.parametrize("case", sorted(MATCHES))
def test_rewrites_give_the_same_bits_and_load_nothing_new_on_the_cpu(case: str, tmp_path: Path) -> None:
    source, launch, _ = MATCHES[case]
    scalars, counts = CPU_SIZES[case]
    # the whole grid of a 2-D stencil; the measured variants and a sample of the others
    rewrites = _all_rewrites(case) if case == "jacobi9_double" else _sample(case)
    assert_rewrites_match(source, _name(source), launch, rewrites, scalars, counts, tmp_path)


def test_longer_columns_are_not_offered_when_they_would_leave_sms_idle() -> None:
    source, launch, _ = MATCHES["jacobi9_double"]
    big = DeviceLimits(sms=132, max_threads_per_sm=2048, max_threads_per_block=1024, shared_bytes_per_block=49152)

    def offered(W: int, H: int) -> list[str]:
        given = ApplierInput(source, _name(source), launch, {"W": W, "H": H}, big)
        return [r.note.split(" ", 1)[0] for r in RegisterColumnStencil().apply(given)]

    # 132 SMs x 8 blocks of 256 threads: 1056 blocks fill the device once
    assert offered(4096, 4096)[:3] == ["4", "8", "2"]  # 32 x 512, 32 x 256 and 64 x 512 blocks
    assert offered(1024, 256) == ["4"]  # the first always; 8 x 16 and 16 x 32 blocks would not fill it
    assert offered(4096, 4096)[:3] == [r.note.split(" ", 1)[0] for r in _rewrites("jacobi9_double")]
    # the rest of the grid likewise: all of it on 4096 x 4096; on 2048 x 512 only 2 points a thread fill it
    assert len(offered(4096, 4096)) == 28
    assert offered(2048, 512) == ["4", "2"] + ["2"] * 6


# Red-team kernels recognised through their plain form (`rewrites_of`: an accessor inlined, local
# plane pointers as offsets, misread comparisons repaired) or through a march over channels:
# (scalars, element count per pointer) for the CPU emulation.
RED_TEAM_CPU_SIZES: dict[str, tuple[dict[str, float | int], dict[str, int]]] = {
    "stencil/jacobi_device_helper": ({"nx": 37, "ny": 19}, {"g": 37 * 19, "out": 37 * 19}),
    "conv/dw_unrolled_nine": ({"H": 13, "W": 11}, {"x": 64 * 13 * 11, "k": 64 * 9, "y": 64 * 11 * 9}),
    "conv/dw_plane_pointer": ({"C": 3, "H": 13, "W": 11}, {"in": 3 * 13 * 11, "filters": 27, "out": 3 * 13 * 11}),
    "conv/dw_march_channels_double": ({"C": 3, "H": 13, "W": 17}, {"src": 3 * 13 * 17, "wt": 27, "dst": 3 * 11 * 15}),
    "stencil/heat3d_7pt_unsigned_cube": ({"n": 13, "k": 0.1}, {"T": 13 ** 3, "Tn": 13 ** 3}),
    "stencil/heat3d_size_t_strides": ({"nx": 13, "ny": 11, "nz": 9, "dt": 0.1}, {"src": 13 * 11 * 9, "dst": 13 * 11 * 9}),
    "conv/dw_gridstride_flat": ({"N": 2, "C": 3, "H": 9, "W": 11}, {"in": 2 * 3 * 9 * 11, "w": 27, "out": 2 * 3 * 7 * 9}),
    "conv/dw_flat_divmod_pad": ({"N": 2, "C": 3, "H": 9, "W": 11}, {"in": 2 * 3 * 9 * 11, "w": 27, "out": 2 * 3 * 9 * 11}),
    "conv/dw_flat_spatial_channel_y": ({"C": 3, "H": 9, "W": 11}, {"in": 3 * 9 * 11, "k": 27, "out": 3 * 9 * 11}),
    "conv/dw_zgrid_valid": ({"C": 3, "H": 9, "W": 11}, {"input": 24 * 9 * 11, "filt": 27, "output": 24 * 7 * 9}),
    # a batch loop no launch axis can take: kept around the rewritten body
    "conv/dw_macro_nchw": ({"N": 3, "C": 3, "H": 9, "W": 11}, {"src": 3 * 3 * 9 * 11, "ker": 27, "dst": 3 * 3 * 7 * 9}),
    "stencil/heat3d_clamped_insulated": ({"nx": 13, "ny": 11, "nz": 9, "alpha": 0.1},
                                         {"t": 13 * 11 * 9, "tn": 13 * 11 * 9}),
    "stencil/jacobi_flat_unsigned_clamp": ({"width": 37, "height": 19}, {"src": 37 * 19, "dst": 37 * 19}),
}


@needs_gxx
@pytest.mark.parametrize("case", sorted(RED_TEAM_CPU_SIZES))
def test_red_team_rewrites_give_the_same_bits_on_the_cpu(case: str, tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_redteam_recognition import case_input

    _, given = case_input(case)
    scalars, counts = RED_TEAM_CPU_SIZES[case]
    rewrites = rewrites_of(RegisterColumnStencil(), given)
    rewrites = rewrites[:3] + rewrites[3::8]  # the measured variants and a sample of the grid
    assert_rewrites_match(given.source, given.kernel, given.launch, rewrites, scalars, counts, tmp_path)
