"""Idiom recognition core: thread mappings, index polynomials, per-item programs and near-misses."""

from __future__ import annotations

import pytest

from regrapht.idioms.items import ItemLoop, item_program, single_program
from regrapht.idioms.syntax import kernel_syntax, text
from regrapht.idioms.threads import thread_mapping


def program(source: str, name: str = "k"):
    kernel = kernel_syntax(source, name)
    assert kernel is not None
    return item_program(kernel) or single_program(kernel)


def loops(source: str) -> list[ItemLoop]:
    found = program(source)
    assert found is not None
    return list(found.loops)


def test_thread_mapping_spellings_resolve_to_one_index() -> None:
    for head in ("int r = blockIdx.x * blockDim.x + threadIdx.x; if (r >= n) return;",
                 "unsigned t = threadIdx.x; unsigned b = blockDim.x * blockIdx.x; int r = b + t; if (r >= n) return;",
                 "const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; if (n <= r) return;"):
        kernel = kernel_syntax(f"__global__ void k(float *y, int n) {{ {head} y[r] = 0; }}", "k")
        assert kernel is not None
        mapping = thread_mapping(kernel)
        assert mapping is not None and [i.name for i in mapping.indices] == ["r"] and mapping.form == "return"


def test_two_dimensional_guard_and_grid_stride() -> None:
    kernel = kernel_syntax("__global__ void k(float *y, int w, int h) { int x = blockIdx.x * blockDim.x + threadIdx.x;"
                           " int yy = blockIdx.y * blockDim.y + threadIdx.y; if (x < w && yy < h) { y[yy * w + x] = 1; } }",
                           "k")
    assert kernel is not None
    mapping = thread_mapping(kernel)
    assert mapping is not None and [(i.name, i.axis, i.bound) for i in mapping.indices] == [("x", "x", "w"), ("yy", "y", "h")]
    kernel = kernel_syntax("__global__ void k(float *y, int n) { for (int i = blockIdx.x * blockDim.x + threadIdx.x;"
                           " i < n; i += blockDim.x * gridDim.x) y[i] = 2; }", "k")
    assert kernel is not None
    mapping = thread_mapping(kernel)
    assert mapping is not None and mapping.form == "grid_stride"


def test_data_dependent_item_bound_is_not_a_mapping() -> None:
    kernel = kernel_syntax("__global__ void k(float *y, const int *n) { int i = blockIdx.x * blockDim.x + threadIdx.x;"
                           " if (i < n[0]) y[i] = 1; }", "k")
    assert kernel is not None and thread_mapping(kernel) is None


ROW_SUM = """__global__ void k(const float *x, float *y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) { float s = 0.0f; for (int c = 0; c < cols; ++c) s += x[r * cols + c]; y[r] = s; }
}"""


def test_row_sum_is_one_sum_over_unit_stride_elements() -> None:
    [loop] = loops(ROW_SUM)
    assert [(a.name, a.op) for a in loop.accumulators] == [("s", "sum")]
    assert loop.unit_stride == {"x"} and text(loop.upper) == "cols"


def test_softmax_three_passes_through_a_row_pointer() -> None:
    source = """__global__ void k(const float *in, float *out, int n, int d) {
        int row = threadIdx.x + blockIdx.x * blockDim.x; if (row >= n) return;
        const float *src = in + row * d;
        float m = -1e30f; for (int j = 0; j < d; j++) m = fmaxf(m, src[j]);
        float sum = 0.f; for (int j = 0; j < d; j++) sum += expf(src[j] - m);
        for (int j = 0; j < d; j++) out[row * d + j] = expf(src[j] - m) / sum; }"""
    found = loops(source)
    assert [[(a.name, a.op, a.combine) for a in loop.accumulators] for loop in found] == [
        [("m", "max", "fmaxf")], [("sum", "sum", "")], []]
    assert found[2].writes == {"out"} and found[2].unit_stride == {"in", "out"}


def test_argmax_and_ternary_max() -> None:
    source = """__global__ void k(const float *x, int *idx, int rows, int cols) {
        int r = blockIdx.x * blockDim.x + threadIdx.x; if (r >= rows) return;
        float best = x[r * cols]; int bi = 0;
        for (int c = 1; c < cols; c++) { float v = x[r * cols + c]; if (v > best) { best = v; bi = c; } }
        idx[r] = bi; }"""
    [loop] = loops(source)
    assert [(a.op, a.index, a.last) for a in loop.accumulators] == [("argmax", "bi", False)]
    source = ROW_SUM.replace("s += x[r * cols + c]", "s = x[r * cols + c] < s ? x[r * cols + c] : s")
    [loop] = loops(source)
    assert [a.op for a in loop.accumulators] == ["min"]


def test_csr_rows_and_scans() -> None:
    source = """__global__ void k(int n, const int *rp, const int *ci, const float *v, const float *x, float *y) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            float acc = 0; int start = rp[i], end = rp[i + 1];
            for (int k = start; k < end; k++) acc += v[k] * x[ci[k]];
            y[i] = acc; } }"""
    found = program(source)
    assert found is not None and found.csr is not None and found.csr.pointer == "rp"
    scan = ROW_SUM.replace("s += x[r * cols + c];", "{ s += x[r * cols + c]; z[r * cols + c] = s; }").replace(
        "y[r] = s;", "").replace("float *y", "float *z")
    [loop] = loops(scan)
    assert loop.scan is not None and loop.accumulators == ()
    whole = """__global__ void k(const float *x, float *y, int n) { if (threadIdx.x == 0 && blockIdx.x == 0) {
        float acc = 0.0f; for (int i = 0; i < n; ++i) { acc += x[i]; y[i] = acc; } } }"""
    found = program(whole)
    assert found is not None and found.item is None and found.loops[0].scan is not None


WHILE_SUM = """__global__ void k(const float *x, float *y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) { float s = 0.0f; int c = 0; while (c < cols) { s += x[r * cols + c]; ++c; } y[r] = s; }
}"""


def test_loads_through_ldg_are_reads() -> None:
    [loop] = loops(ROW_SUM.replace("s += x[r * cols + c];", "s += __ldg(x + r * cols + c);"))
    assert loop.unit_stride == {"x"}
    [loop] = loops(ROW_SUM.replace("s += x[r * cols + c];", "s += __ldg(&x[r * cols + c]);"))
    assert loop.unit_stride == {"x"}


def test_while_loop_is_an_element_loop() -> None:
    [loop] = loops(WHILE_SUM)
    assert loop.var == "c" and text(loop.lower) == "0" and [a.op for a in loop.accumulators] == ["sum"]


@pytest.mark.parametrize("near_miss", [
    # the while loop's index is also changed inside the body
    WHILE_SUM.replace("s += x[r * cols + c];", "s += x[r * cols + c]; c += 1;"),
    # ... or used after the loop
    WHILE_SUM.replace("y[r] = s;", "y[r] = s + c;"),
    # an early return inside the row loop
    ROW_SUM.replace("s += x[r * cols + c];", "{ if (x[r * cols + c] < 0) return; s += x[r * cols + c]; }"),
    # a non-associative update (online rescaling reads the accumulator)
    ROW_SUM.replace("s += x[r * cols + c];", "s = s * 0.5f + x[r * cols + c];"),
    # a data-dependent bound that is not a CSR row range
    ROW_SUM.replace("c < cols", "c < (int)x[r]"),
    # reads its own output at another index (aliasing: a recurrence through memory)
    ROW_SUM.replace("const float *x", "float *x").replace("s += x[r * cols + c];",
                                                           "{ x[r * cols + c] += x[r * cols + c - 1]; s += 1.0f; }"),
    # an extra side effect
    ROW_SUM.replace("y[r] = s;", "y[r] = s; atomicAdd(&y[0], s);"),
    # a barrier
    ROW_SUM.replace("y[r] = s;", "__syncthreads(); y[r] = s;"),
    # every row writes the same element
    ROW_SUM.replace("y[r] = s;", "y[0] = s;"),
    # a nested loop
    ROW_SUM.replace("s += x[r * cols + c];", "for (int q = 0; q < 2; q++) s += x[r * cols + c];"),
    # a call that may do anything
    ROW_SUM.replace("s += x[r * cols + c];", "s += helper(x[r * cols + c]);"),
])
def test_near_misses_are_refused(near_miss: str) -> None:
    kernel = kernel_syntax(near_miss, "k")
    assert kernel is not None
    assert item_program(kernel) is None and single_program(kernel) is None


def test_an_item_may_store_at_several_indices_only_when_no_two_items_share_one() -> None:
    template = """__global__ void k(const float *x, float *y, int n, int d) {{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < n) {{
        float a = 0.0f; float b = 0.0f;
        for (int j = 0; j < d; ++j) {{ a += x[r * d + j]; b = fmaxf(b, x[r * d + j]); }}
        y[{first}] = a;
        y[{second}] = b{extra};
    }}
}}"""
    plain = {"first": "r * 2", "second": "r * 2 + 1", "extra": ""}
    assert program(template.format(**plain)) is not None
    assert program(template.format(**{**plain, "first": "2 * r + 1", "second": "2 * r"})) is not None
    for change in ({"second": "r * 2 + 2"},  # item r's second store is item r + 1's first
                   {"second": "r + 1"},  # strides differ
                   {"first": "r * d", "second": "r * d + 1"},  # a stride known only at run time
                   {"extra": " + y[r * 2]"}):  # the stored array is also read
        assert program(template.format(**{**plain, **change})) is None, change
