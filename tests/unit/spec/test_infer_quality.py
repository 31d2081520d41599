"""`spec infer` on expert-style launches (issue 14): dim3 variables and host locals followed to
their values, 2-D buffers sized from their indexing, and every guess marked as a guess."""

from __future__ import annotations

from regrapht.spec.infer import infer_spec
from regrapht.spec.model import parse_spec

MATMUL = """#define TILE 16
__global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float s = 0.0f;
        for (int k = 0; k < K; ++k) s += A[row * K + k] * B[k * N + col];
        C[row * N + col] = s;
    }
}
void run(const float *A, const float *B, float *C, int m, int n, int k) {
    const int blocks_x = (n + TILE - 1) / TILE;
    const int blocks_y = (m + TILE - 1) / TILE;
    dim3 block(TILE, TILE);
    dim3 grid(blocks_x, blocks_y);
    matmul<<<grid, block>>>(A, B, C, m, n, k);
}
"""


def test_dim3_with_macros_and_host_locals_is_followed() -> None:
    kernel = parse_spec(infer_spec(MATMUL, "matmul")).kernels[0]
    assert kernel.block == (16, 16)
    assert kernel.grid == ("(N + 16 - 1) / 16", "(M + 16 - 1) / 16")


def test_two_dimensional_buffers_are_sized_from_their_indexing() -> None:
    text = infer_spec(MATMUL, "matmul")
    counts = {a.name: a.count for a in parse_spec(text).kernels[0].args if a.count is not None}
    assert counts == {"A": "M * K", "B": "K * N", "C": "M * N"}
    # proven from the accesses at the drafted launch: not a guess any more
    assert parse_spec(text).kernels[0].guessed == ()


def test_every_guess_is_marked() -> None:
    source = """__global__ void k(float *y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 0; }
void run(float *y, int n, dim3 g, dim3 b) { k<<<g, b>>>(y, n); }
"""
    text = infer_spec(source, "k")
    assert "# n = 1 << 20 is a guess" in text
    # the launch is a guess (the dim3s are the host's parameters); the count is proven at it
    assert set(parse_spec(text).kernels[0].guessed) == {"grid", "block"}
    assert "is a guess: `g` is not over the spec's sizes" in text
    assert "is a guess: `b` is not a size of the spec" in text
    no_launch = infer_spec("__global__ void k(float *y, int n) { y[threadIdx.x] = n; }", "k")
    assert "block = [256] is a guess: no launch of the kernel in the file" in no_launch
