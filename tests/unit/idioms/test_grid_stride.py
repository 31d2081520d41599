"""idioms.grid_stride: a final grid-stride loop nest written as its guard (what it is when the
launch covers the range; `point_view` checks that), and what is left as written."""

from __future__ import annotations

from regrapht.idioms.grid_stride import grid_stride_as_guard


def _body(source: str) -> str:
    return " ".join(source[source.index("{"):].split())


def test_a_one_dimensional_loop_becomes_a_guard_and_its_locals_move_or_go() -> None:
    source = """__global__ void k(const float *x, float *y, long long n) {
    const float half = 0.5f;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = half * x[i];
    }
}"""
    # `half` is read by the body only: it moves under the guard; `stride` only stepped the loop
    assert _body(grid_stride_as_guard(source, "k")) == (
        "{ long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; "
        "if ((i < n)) { const float half = 0.5f; y[i] = half * x[i]; } }")


def test_a_nest_over_two_axes_becomes_one_guard() -> None:
    source = """__global__ void k(const float *a, float *b, int h, int w) {
    for (int r = blockIdx.y * blockDim.y + threadIdx.y + 1; r < h - 1; r += blockDim.y * gridDim.y)
        for (int c = threadIdx.x + blockIdx.x * blockDim.x; c < w; c += gridDim.x * blockDim.x)
            b[r * w + c] = a[r * w + c];
}"""
    assert _body(grid_stride_as_guard(source, "k")) == (
        "{ int r = blockIdx.y * blockDim.y + threadIdx.y + 1; int c = threadIdx.x + blockIdx.x * blockDim.x; "
        "if ((r < h - 1) && (c < w)) b[r * w + c] = a[r * w + c]; }")


def test_loops_that_are_not_one_point_per_thread_are_left_alone() -> None:
    head = "__global__ void k(const float *x, float *y, int n) {\n"
    loop = "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)"
    for source in (
        head + loop + " { if (x[i] < 0) break; y[i] = x[i]; }\n}",  # leaves on the data
        head + loop + " { y[i] = x[i]; i += 1; }\n}",  # the counter moves in the body
        head + loop + " { int i = 0; y[i] = x[i]; }\n}",  # a shadowing counter
        head + loop.replace("blockDim.x * gridDim.x", "blockDim.x") + " { y[i] = x[i]; }\n}",  # blocks overlap
        head + loop.replace("i < n", "i < (int)x[0]") + " { y[i] = x[i]; }\n}",  # a loaded bound
        head + loop + " { y[i] = x[i]; }\n y[0] = 1.0f;\n}",  # not the last statement
        head + "int i = 2;\n" + loop + " { y[i] = x[i]; }\n}",  # hoisting would redeclare `i`
    ):
        assert grid_stride_as_guard(source, "k") == source, source
