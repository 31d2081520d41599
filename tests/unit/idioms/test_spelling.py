"""idioms.spelling: macros, one-line helpers, functional casts, do-while and count-down loops
written the plain way, and the scans hidden behind them recognised (or not, for near-misses)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from regrapht.idioms.spelling import plain_spelling
from regrapht.search.appliers import ApplierInput, rewrites_of
from regrapht.spec.launch import LaunchConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))
from test_redteam_recognition import BY_NAME, case_input  # noqa: E402


def _body(source: str) -> str:
    return " ".join(source[source.index("__global__"):].split())


def test_each_spelling_is_written_plainly() -> None:
    source = """#define AT(p, i) ((p)[(i)])
__device__ float add(float a, float b) { return a + b; }
__global__ void k(const float *x, float *y, int n) {
    float s = 0.0f;
    int i = 0;
    do { s = add(s, AT(x, i)); AT(y, i) = s; i++; } while (i < n);
    for (int left = n; left > 0; --left) { y[n - left] += 1; }
}"""
    plain = _body(plain_spelling(source, "k"))
    # do/while -> while -> for (the counter is declared just before, stepped last, unused after)
    assert "for (int i = 0; i < n; i++) { s = ((s) + (((x)[(i)]))); ((y)[(i)]) = s; }" in plain
    assert "float s = 0.0f; for (int i = 0;" in plain
    assert "for (int walk_up = 0; walk_up < (n) - (0); ++walk_up) { const int left = (n) - walk_up;" in plain
    template = "template <typename T> __global__ void t(T *y) { T s = T(0); y[0] = s; }"
    assert "T s = static_cast<T>(0);" in _body(plain_spelling(template, "t"))


def test_helpers_are_inlined_only_where_no_conversion_is_lost() -> None:
    source = """__device__ int add(int a, int b) { return a + b; }
__device__ short twice(short a) { return a + a; }
__global__ void k(const float *x, float *y, short *z, int n) {
    float s = 0.0f;
    short h = 1;
    s = add(s, x[0]);
    z[0] = twice(h);
}"""
    assert _body(plain_spelling(source, "k")) == _body(source)  # float -> int; short promoted to int


def test_what_it_does_not_fully_understand_is_left_alone() -> None:
    source = """__device__ float twice(float a) { return a + a; }
__global__ void k(float *y, int n) {
    int i = 0;
    do { if (y[i] < 0) break; y[i] = 0; i++; } while (i < n);
    y[0] = twice(y[n++]);
    for (int left = n; left > 0; --left) { left -= 1; y[left] = 0; }
}"""
    assert _body(plain_spelling(source, "k")) == _body(source)


def test_a_counted_while_becomes_a_for_only_when_it_is_the_same_loop() -> None:
    template = """__global__ void k(const float *x, const int *len, float *y, int n) {{
    float s = 0.0f;
    int k = 0;
    float t = 2.0f;
    while ({condition}) {{
        s += x[k] * t;{extra}
        {step};
    }}
    y[0] = s;{after}
}}"""
    plain = {"condition": "k < n", "extra": "", "step": "k++", "after": ""}
    converted = _body(plain_spelling(template.format(**plain), "k"))
    assert "float t = 2.0f; for (int k = 0; k < n; k++) { s += x[k] * t; } y[0] = s;" in converted
    for step in ("++k", "k += 1", "k = k + 1", "k = 1 + k"):
        assert f"for (int k = 0; k < n; {step})" in _body(plain_spelling(template.format(**{**plain, "step": step}), "k"))
    assert "for (int k = 0; k <= n; k++)" in _body(plain_spelling(template.format(**{**plain, "condition": "k <= n"}), "k"))
    not_the_same = [
        {"extra": "\n        k += 2;"},  # the counter also changes in the body
        {"extra": "\n        if (s > 1) k++;"},
        {"extra": "\n        int *p = &k;"},  # its address escapes
        {"condition": "k < len[0]"},  # the condition reads memory
        {"condition": "k < n && s < 4"},
        {"extra": "\n        if (s > 1) continue;"},  # continue would skip the increment
        {"after": "\n    y[1] = k;"},  # the counter is used after the loop
        {"step": "k += 2"},  # not a unit step
        {"step": "k--"},
    ]
    for change in not_the_same:
        source = template.format(**{**plain, **change})
        assert _body(plain_spelling(source, "k")) == _body(source), change
    # something between the declaration and the loop changes what the start reads
    moved = """__global__ void k(const float *x, float *y, int n, int m) {
    float s = 0.0f;
    int k = m;
    m = 0;
    while (k < n) { s += x[k]; k++; }
    y[0] = s;
}"""
    assert _body(plain_spelling(moved, "k")) == _body(moved)



def test_a_do_while_counting_down_from_its_start_becomes_a_for() -> None:
    template = """__global__ void k(const double *a, double *s, const int *len, int n) {{
    double t = 0.0;
    {type} i = {start};
    double w = 1.0;
    do {{
        {step};
        t += a[i] * w;{extra}
    }} while ({condition});
    s[0] = t;{after}
}}"""
    plain = {"type": "int", "start": "n", "step": "--i", "extra": "", "condition": "i > 0", "after": ""}
    converted = _body(plain_spelling(template.format(**plain), "k"))
    # then counted up by `_count_up`: the same values, n - 1 down to 0
    assert "double w = 1.0; for (int walk_up = 0; walk_up < ((n) - 1) - (0) + 1; ++walk_up) { " \
           "const int i = ((n) - 1) - walk_up; t += a[i] * w; }" in converted
    for step in ("i--", "i -= 1", "i = i - 1"):
        assert "const int i = ((n) - 1) - walk_up;" in _body(plain_spelling(template.format(**{**plain, "step": step}),
                                                                            "k"))
    not_the_same = [
        {"type": "unsigned"},  # never below zero
        {"type": "size_t"},
        {"start": "len[0]"},  # the start reads memory
        {"step": "i -= 2"},  # not a unit step
        {"step": "++i"},
        {"condition": "i > 1"},
        {"condition": "i >= 0"},
        {"extra": "\n        i -= 1;"},  # stepped twice
        {"extra": "\n        if (t > 4) break;"},
        {"extra": "\n        if (t > 4) continue;"},
        {"after": "\n    s[1] = i;"},  # used after the loop
    ]
    for change in not_the_same:
        source = template.format(**{**plain, **change})
        assert "walk_up" not in _body(plain_spelling(source, "k")), change
        assert "do {" in _body(plain_spelling(source, "k")), change


def test_a_counter_reused_by_loops_gets_one_per_loop_only_when_no_value_flows_between_them() -> None:
    template = """__global__ void k(const float *x, float *y, int d) {{
    float m = x[0];
    int j = 1;
    while (j < d) {{ m = fmaxf(m, x[j]); ++j; }}
    float t = 0.0f;{between}
    j = 0;
    while (j < d) {{ t += x[j] - m; {step}; }}
    for (j = 0; j < d; ++j) y[j] = x[j] / t;{after}
}}"""
    plain = {"between": "", "step": "++j", "after": ""}
    converted = _body(plain_spelling(template.format(**plain), "k"))
    assert "int j" not in converted.split("for")[0]  # the block's declaration went
    assert "for (int j = 1; j < d; ++j) { m = fmaxf(m, x[j]); }" in converted
    assert "float t = 0.0f; for (int j = 0; j < d; ++j) { t += x[j] - m; }" in converted
    assert "for (int j = 0; j < d; ++j) y[j] = x[j] / t;" in converted
    not_the_same = [
        {"between": "\n    t = (float)j;"},  # reads what the first loop left
        {"between": "\n    j = j - d;"},  # restarts from it
        {"between": "\n    int *p = &j;"},  # its address escapes
        {"after": "\n    y[0] = j;"},  # read after the last loop
        {"step": "if (t > 1) continue; ++j"},  # continue would skip the step
        {"step": "j += 0"},  # not a step the for form takes
    ]
    for change in not_the_same:
        source = template.format(**{**plain, **change})
        assert "for (int j" not in _body(plain_spelling(source, "k")), change
    # a while loop that is not started afresh reads the value the one before left (it runs no time)
    unstarted = template.format(**plain).replace("    j = 0;\n", "")
    assert "for (int j" not in _body(plain_spelling(unstarted, "k"))
    # a for loop that keeps the value (`for (; j < d; ++j)`)
    kept = template.format(**plain).replace("for (j = 0;", "for (;")
    assert "for (int j" not in _body(plain_spelling(kept, "k"))



def test_a_global_index_spelled_through_block_local_pointers_is_named_once() -> None:
    template = """__global__ void k(const float *x, float *y, int n) {{
    const float *xb = x + blockIdx.x * blockDim.x;
    float *yb = y + blockIdx.x * blockDim.x;
    {type} t = threadIdx.x;{extra}
    if ({guard} < n)
        yb[t] = xb[{index}] * 2.0f;
}}"""
    plain = {"type": "int", "extra": "", "guard": "blockIdx.x * blockDim.x + t", "index": "t"}
    converted = _body(plain_spelling(template.format(**plain), "k"))
    assert converted.startswith("__global__ void k(const float *x, float *y, int n) { "
                                "const unsigned int global_x = blockIdx.x * blockDim.x + threadIdx.x; ")
    assert "if (global_x < n) y[global_x] = x[global_x] * 2.0f;" in converted
    assert "threadIdx.x" not in converted.split("+ threadIdx.x;", 1)[1] and "int t" not in converted
    for same in ({"type": "unsigned"}, {"guard": "t + blockDim.x * blockIdx.x"}):
        assert "if (global_x < n)" in _body(plain_spelling(template.format(**{**plain, **same}), "k")), same
    not_the_same = [
        {"type": "long long"},  # a signed 64-bit comparison with n, not the unsigned one of the coordinate
        {"guard": "t"},  # the guard bounds the thread of the block, not the point
        {"guard": "(int)(blockIdx.x * blockDim.x + t)"},
        {"extra": "\n    t = t % 32;"},  # the thread index changes
        {"extra": "\n    int *p = &t;"},
        {"index": "t + 1"},  # another point's element: the block index stays in use
        {"extra": "\n    yb += 1;"},  # re-pointed: not a fixed offset of y
    ]
    for change in not_the_same:
        source = template.format(**{**plain, **change})
        assert "global_x" not in _body(plain_spelling(source, "k")), change
    # a kernel that names the index (a coordinate, a loop's start) or only tests it is left to its readers
    for named in ("int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i];",
                  "if (blockIdx.x * blockDim.x + threadIdx.x == 0) y[0] = x[0];"):
        source = f"__global__ void k(const float *x, float *y, int n) {{ {named} }}"
        assert "global_x" not in plain_spelling(source, "k"), named


NEAR_MISSES = [
    # the macro reads one ahead of the position
    ("scan/macro_index", "#define AT(p, i) ((p)[(i)])", "#define AT(p, i) ((p)[(i) + 1])"),
    # the helper multiplies: not a running sum
    ("scan/device_helper_add", "return a + b;", "return a * b;"),
    # counting down with the position itself as the index: the scan runs backwards
    ("scan/count_down_index", "int i = n - left;", "int i = left - 1;"),
    # the do-while body ends early on the data
    ("scan/do_while_long_long", "r[i] = acc;", "r[i] = acc;\n        if (acc < 0) break;"),
]


@pytest.mark.parametrize("case,old,new", NEAR_MISSES)
def test_near_misses_behind_a_spelling_are_not_rewritten(case: str, old: str, new: str) -> None:
    expected, given = case_input(case)
    assert old in given.source
    changed = ApplierInput(given.source.replace(old, new), given.kernel, given.launch, given.constants, given.device)
    assert all(BY_NAME[name].apply(changed) == [] for name in expected)


def test_a_parenthesised_variable_before_an_operator_is_an_operand_not_a_cast() -> None:
    from regrapht.idioms.syntax import Symbols, kernel_syntax, walk

    source = """#define CM(i, j, ld) ((i) + (j) * (ld))
typedef long idx_t;
__global__ void k(const float *A, float *y, int lda, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float t = 0.f;
    for (int col = 0; col < n; col++) t += A[CM(row, col, lda)] + (float)(idx_t) -col;
    y[row] = t;
}"""
    plain = _body(plain_spelling(source, "k"))
    # C++ reads `(row) + (col) * (lda)` as a sum (row is a variable); a typedef's cast stays a cast
    assert "A[(row + (col) * (lda))]" in plain and "(idx_t) -col" in plain
    # read as written, tree-sitter builds the cast `(row)(+col) * lda`: its value is unknown, not `col * lda`
    syntax = kernel_syntax(source.replace("CM(row, col, lda)", "(row) + col * lda"), "k")
    assert syntax is not None
    index = next(n for n in walk(syntax.body) if n.type == "subscript_argument_list")
    poly = Symbols(syntax.constants).poly(index.named_children[0])
    assert "row" in " ".join(poly.atoms()) or any(a.startswith("~") for a in poly.atoms())


def test_object_like_macros_for_expressions_are_expanded_where_in_effect() -> None:
    source = """#define GID (blockIdx.x * blockDim.x + threadIdx.x)
#define STRIDE_ALL (gridDim.x * blockDim.x)
#define TWICE (2 * STRIDE_ALL)
#define N 64
__global__ void k(float *y, float scale) { int i = GID; y[i] = scale * N + TWICE; }
#define scale (3.0f)
"""
    plain = _body(plain_spelling(source, "k"))
    # expanded as the preprocessor would (values rescanned); integer ones stay constants; a
    # macro defined after the kernel is not in effect in it
    assert "int i = (blockIdx.x * blockDim.x + threadIdx.x);" in plain
    assert "y[i] = scale * N + (2 * (gridDim.x * blockDim.x));" in plain


def test_local_pointers_into_parameters_are_subscripts_of_the_parameter() -> None:
    source = """__global__ void k(const float *in, const float *w, float *out, int C, int n) {
    int c = blockIdx.x;
    const float *plane = in + (size_t)c * n;
    const float *taps = &w[c * 9];
    out[c] = plane[1] * taps[0] + plane[n - 1] * taps[8];
}"""
    plain = _body(plain_spelling(source, "k"))
    assert "out[c] = in[(long long)((size_t)c * n) + (1)] * w[(long long)(c * 9) + (0)] + " \
           "in[(long long)((size_t)c * n) + (n - 1)] * w[(long long)(c * 9) + (8)];" in plain
    assert "*plane" not in plain and "*taps" not in plain
    not_the_same = [
        "const float *plane = in + (size_t)c * n; plane += n;",  # re-pointed
        "const float *plane = in + (size_t)c * n; c = c + 1;",  # the offset changes after
        "const float *plane = in + (size_t)c * n; float first = *plane;",  # used other than by subscript
        "const float *plane = in + (size_t)c * n; { const float *plane = in; }",  # shadowed
    ]
    for declaration in not_the_same:
        changed = source.replace("const float *plane = in + (size_t)c * n;", declaration)
        assert "const float *plane = in + (size_t)c * n;" in _body(plain_spelling(changed, "k")), declaration


def test_a_local_pointer_into_the_output_is_read_as_the_output() -> None:
    # the field is read through a pointer into what the kernel writes: no stencil
    source = """__global__ void smear(const float *in, float *out, int W, int H) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 2 || x >= W - 1 || y >= H - 1) return;
    const float *above = out + W;
    out[y * W + x] = above[(y - 2) * W + x] + above[(y - 3) * W + x] + in[y * W + x - 1] + in[y * W + x + 1]
                   + in[y * W + x];
}"""
    given = ApplierInput(source, "smear", LaunchConfig(("(W + 31) / 32", "(H + 7) / 8"), ("32", "8")))
    assert "out[(long long)(W) + ((y - 2) * W + x)]" in plain_spelling(source, "smear")
    for name in ("RegisterColumnStencil", "HaloTiledStencil"):
        assert rewrites_of(BY_NAME[name], given) == []


def test_an_accessor_is_inlined_with_its_return_conversion_and_misread_comparisons_repaired() -> None:
    source = """__device__ float at(const float *g, int x, int y, int nx, int ny)
{
    return (x < 0 || y < 0 || x >= nx || y >= ny) ? 0.0f : g[y * nx + x];
}
__global__ void k(const float *g, float *out, int nx, int ny) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    long wide = x;
    out[y * nx + x] = at(g, x - 1, y, nx, ny) + at(g, wide, y, nx, ny);
    out[x] = (x < 0 || y < 0 || x >= nx || y >= ny) ? 0.0f : g[x];
}"""
    plain = _body(plain_spelling(source, "k"))
    # the grammar reads `y < 0 || x >= nx` as `y<...>`: the variable is parenthesised instead
    assert "out[x] = ((x) < 0 || (y) < 0 || x >= nx || y >= ny) ? 0.0f : g[x];" in plain
    # the accessor's float result stays float; `wide` (a long for an int) is not inlined
    assert "((float)((((x - 1)) < 0 || ((y)) < 0 || (x - 1) >= (nx) || (y) >= (ny)) ? 0.0f : g[(y) * (nx) + (x - 1)]))" \
        in plain
    assert "at(g, wide, y, nx, ny)" in plain


def test_an_accessor_into_the_output_is_no_stencil() -> None:
    source = """__device__ float at(const float *g, int x, int y, int nx)
{
    return g[y * nx + x];
}
__global__ void k(const float *in, float *out, int nx, int ny) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
    out[y * nx + x] = at(in, x - 1, y, nx) + at(in, x + 1, y, nx) + at(in, x, y, nx) + at(out, x, y - 1, nx);
}"""
    given = ApplierInput(source, "k", LaunchConfig(("(nx + 31) / 32", "(ny + 7) / 8"), ("32", "8")))
    assert "out[(y - 1) * (nx) + (x)]" in plain_spelling(source, "k")
    for name in ("RegisterColumnStencil", "HaloTiledStencil"):
        assert rewrites_of(BY_NAME[name], given) == []
    reads_in_only = ApplierInput(source.replace("at(out, x, y - 1, nx)", "at(in, x, y - 1, nx)"), "k", given.launch)
    assert all(rewrites_of(BY_NAME[name], reads_in_only) for name in ("RegisterColumnStencil", "HaloTiledStencil"))
