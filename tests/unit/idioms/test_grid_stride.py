"""idioms.grid_stride: the one reading of a loop header (`counted_loop`, `loop_nest`), and a
final grid-stride loop nest written as its guard (what it is when the launch covers the range;
`point_view` checks that), and what is left as written."""

from __future__ import annotations

from regrapht.cuda.affine import Poly
from regrapht.idioms.grid_stride import CountedLoop, counted_loop, grid_stride_as_guard, loop_nest
from regrapht.idioms.syntax import Symbols, kernel_syntax, named_statements, text


def _nest(source: str) -> list[CountedLoop]:
    """The loops read from the kernel's last statement inward (locals before it resolved)."""
    syntax = kernel_syntax(source, "k")
    assert syntax is not None
    statements = named_statements(syntax.body)
    symbols = Symbols(syntax.constants)
    for statement in statements[:-1]:
        for declarator in statement.children_by_field_name("declarator"):
            symbols.define(text(declarator.child_by_field_name("declarator")), declarator.child_by_field_name("value"))
    return loop_nest(statements[-1], lambda node, _: counted_loop(node, symbols))


def test_a_loop_header_is_read_as_counter_start_step_bound_and_axis() -> None:
    [loop] = _nest("""__global__ void k(float *y, int n) {
    const int stride = gridDim.y * blockDim.y;
    for (long long i = threadIdx.y + blockIdx.y * blockDim.y + 2; i <= n - 1; i += stride) y[i] = 0;
}""")
    assert (loop.counter, loop.type, text(loop.start), loop.comparison, text(loop.bound)) == \
        ("i", "long long", "threadIdx.y + blockIdx.y * blockDim.y + 2", "<=", "n - 1")
    assert loop.axis == "y" and loop.offset == Poly.const(2) and text(loop.body) == "y[i] = 0;"


def test_a_nest_is_read_to_its_first_loop_of_another_form() -> None:
    loops = _nest("""__global__ void k(float *y, int n, int m) {
    for (int z = 1; z < n; ++z) {
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < m; x += blockDim.x * gridDim.x)
            for (int j = m; j > 0; j--) y[z * m + x] += j;
    }
}""")
    # the march has no grid-stride axis; its step and first point are read all the same
    assert [(loop.counter, loop.axis, loop.step, loop.offset) for loop in loops] == [
        ("z", None, Poly.const(1), Poly.const(1)), ("x", "x", loops[1].step, Poly.const(0))]


def test_headers_of_other_forms_are_not_read() -> None:
    for header in ("int i = 0; i > n; i++", "int i = 0; n > i; i++", "int i = 0; i < n; i -= 1",
                   "int i = 0; i < n; i = i + 1", "i = 0; i < n; i++", "int i = 0, j = 0; i < n; i++",
                   "int i = 0; i < n; j++"):
        assert _nest(f"__global__ void k(float *y, int n) {{ int j = 0;\n for ({header}) y[i] = 0; }}") == [], header


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
