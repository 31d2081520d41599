"""Read-only loads (idioms/read_only.py): which arrays qualify for `__ldg` and how loads are written."""

from __future__ import annotations

from regrapht.idioms.read_only import read_only_arrays, with_read_only_loads

SOURCE = """__global__ void k(const int *ptr, const int *col, const float *val, const float *x, float *y,
                  const float *alias_src, const float *moved, const float2 *pairs, int n) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    const float *p = alias_src + r;
    moved = moved + 1;
    float s = 0.0f;
    for (int k = ptr[r]; k < ptr[r + 1]; ++k) s += val[k] * x[col[k]] + *p + moved[0] + pairs[k].x;
    y[r] = s;
}"""


def test_const_parameters_never_written_or_aliased_qualify() -> None:
    # alias_src is aliased by p, moved is reassigned, pairs is loaded but `.x` of a float2 is fine
    assert read_only_arrays(SOURCE, "k") == {"ptr", "col", "val", "x", "pairs"}
    # a const array the kernel casts away and writes is not read-only
    written = SOURCE.replace("y[r] = s;", "y[r] = s; ((float *)x)[r] = 0.0f;")
    assert "x" not in read_only_arrays(written, "k")
    assert read_only_arrays("__global__ void t(float *a, const double *b) { a[0] = b[0]; }", "t") == {"b"}


def test_loads_are_wrapped_and_nested_loads_each_get_theirs() -> None:
    rewritten = with_read_only_loads(SOURCE, "k", frozenset({"val", "x", "col"}))
    assert "s += __ldg(&val[k]) * __ldg(&x[__ldg(&col[k])])" in rewritten
    assert "ptr[r]" in rewritten and "__ldg(&ptr" not in rewritten
    assert with_read_only_loads(SOURCE, "k", frozenset()) == SOURCE
