"""R012 on block-strided loops whose bound is rounded up (issue 27): `for (r = threadIdx.y;
r < ROUND_UP(n, blockDim.y); r += blockDim.y)` runs the same number of iterations in every
thread of the block, so a barrier inside it is not divergent. The near-misses (a bound that is
not rounded, a start that is not a thread index below the step, an early `break`) still are.
The kernels are written for these tests."""

from __future__ import annotations

import pytest

from regrapht.rules import analyze_text


def found(text: str, rule: str = "R012") -> list[tuple[str, int]]:
    """(severity, 1-based line) of `rule`'s findings."""
    return [(f.severity, f.span.start.line + 1) for f in analyze_text(text) if f.rule == rule]


# Rows of a matrix through a shared tile, blockDim.y rows per pass; the last pass is partial, so
# the loop runs to the row count rounded up and guards the work instead of the barrier.
PADDED_ROWS = """__global__ void transpose_rows(const float *in, float *out, int rows, int cols) {
    __shared__ float tile[32][33];
    int padded = ((rows + blockDim.y - 1) / blockDim.y) * blockDim.y;
    for (int r = threadIdx.y; r < padded; r += blockDim.y) {
        if (r < rows) tile[threadIdx.y][threadIdx.x] = in[r * cols + threadIdx.x];
        __syncthreads();
        if (r < rows) out[r * cols + threadIdx.x] = tile[threadIdx.y][31 - threadIdx.x];
        __syncthreads();
    }
}"""


def test_r012_rows_rounded_up_to_the_block_height_are_uniform() -> None:
    assert found(PADDED_ROWS) == []


def test_r012_a_bound_in_shared_memory_written_by_one_thread_and_a_ternary_round_up() -> None:
    """The bound is a `__shared__` scalar (one value per block) that thread 0 writes before a
    barrier, rounded with `n / s + (n % s == 0 ? 0 : 1)`; the step is a shared copy of blockDim.y."""
    text = """__global__ void smooth(const float *in, float *out, int len, int width) {
    extern __shared__ float line[];
    __shared__ int rows_per_pass, last_row;
    const int ty = threadIdx.y;
    rows_per_pass = blockDim.y;
    if (ty == 0 && threadIdx.x == 0)
        last_row = (len / rows_per_pass + (len % rows_per_pass == 0 ? 0 : 1)) * rows_per_pass;
    __syncthreads();
    for (int row = ty, pass = 0; row < last_row; row += rows_per_pass, pass++) {
        __syncthreads();
        if (row < len) line[ty * width + threadIdx.x] = in[row * width + threadIdx.x];
        __syncthreads();
        if (row < len) out[row * width + threadIdx.x] = 0.5f * line[ty * width + threadIdx.x] + pass;
    }
}"""
    assert found(text) == []


def test_r012_a_flat_thread_index_and_a_step_that_is_a_multiple_of_the_block() -> None:
    """`threadIdx.x + blockDim.x * threadIdx.y` lies in [0, blockDim.x * blockDim.y); a step of
    twice the block over a bound rounded to one block still gives every thread the same count
    (`whole > i` and `i <= whole - 1` are the same test)."""
    text = """__global__ void stage(const float *in, float *out, int base, int n) {
    __shared__ float buffer[1024];
    const int flat = threadIdx.y * blockDim.x + threadIdx.x;
    const int threads = blockDim.x * blockDim.y;
    const int whole = (n + threads - 1) / threads * threads;
    for (int i = base + flat; i < base + whole; i += 2 * threads) {
        buffer[flat] = i < base + n ? in[i] : 0.0f;
        __syncthreads();
        if (i < base + n) out[i] = buffer[threads - 1 - flat];
        __syncthreads();
    }
    for (int i = flat; whole > i; i = i + threads) {
        buffer[flat] = i < n ? in[i] : 0.0f;
        __syncthreads();
    }
    for (int i = flat; i <= whole - 1; i += threads) {
        buffer[flat] = i < n ? in[i] : 0.0f;
        __syncthreads();
    }
}"""
    assert found(text) == []


@pytest.mark.parametrize("old, new", [
    # The bound is the row count itself: the last pass has fewer rows than threads.
    ("r < padded", "r < rows"),
    # The thread index of another dimension: threadIdx.x goes beyond blockDim.y.
    ("int r = threadIdx.y", "int r = threadIdx.x"),
    # Offsets and scalings move some threads' start past the step.
    ("int r = threadIdx.y", "int r = threadIdx.y + 1"),
    ("int r = threadIdx.y", "int r = 2 * threadIdx.y"),
    # A bound rounded to 32 rows, not to the block's height.
    ("((rows + blockDim.y - 1) / blockDim.y) * blockDim.y", "((rows + 31) / 32) * 32"),
    # A step that is not a multiple of the thread index's range.
    ("r += blockDim.y", "r += 16"),
    ("r += blockDim.y", "r++"),
    # The bound read per thread from memory.
    ("int padded = ((rows + blockDim.y - 1) / blockDim.y) * blockDim.y;",
     "int padded = ((rows + blockDim.y - 1) / blockDim.y) * blockDim.y - (int) in[threadIdx.y];"),
    # A thread may leave the loop early or move its own bound.
    ("if (r < rows) out", "if (in[r] < 0.0f) break;\n        if (r < rows) out"),
    ("if (r < rows) out", "if (in[r] < 0.0f) padded -= blockDim.y;\n        if (r < rows) out"),
    ("if (r < rows) out", "if (in[r] < 0.0f) r += blockDim.y;\n        if (r < rows) out"),
])
def test_r012_near_misses_of_the_rounded_loop_stay_divergent(old: str, new: str) -> None:
    assert old in PADDED_ROWS
    findings = found(PADDED_ROWS.replace(old, new))
    assert findings and all(severity == "error" for severity, _ in findings)


def test_r012_a_break_out_of_an_inner_loop_does_not_leave_the_rounded_loop() -> None:
    text = PADDED_ROWS.replace(
        "if (r < rows) out",
        "for (int c = 0; c < cols; c++) { if (in[c] < 0.0f) break; }\n        if (r < rows) out")
    assert found(text) == []
