"""idioms.jam: a constant loop around one inner loop jammed into it (the dense columns of a CSR
SpMM row), and the near-misses where the iterations share more than read-only memory left alone."""

from __future__ import annotations

import pytest

from regrapht.idioms.jam import jammed_constant_loops

SPMM = """#define NC 4
__global__ void spmm(const int *ptr, const int *col, const float *val, const float *B, float *C, int n, int nc) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float seen = 0.0f;
    if (row < n) {
        for (int c = 0; c < NC; ++c) {
            float sum = 0.0f;
            for (int e = ptr[row]; e < ptr[row + 1]; ++e) {
                float b = B[col[e] * NC + c];
                sum += val[e] * b;
            }
            C[row * NC + c] = sum;
        }
    }
}
"""


def _body(source: str) -> str:
    return " ".join(source[source.index("__global__"):].split())


def test_the_columns_of_a_spmm_row_are_jammed_into_the_row_loop() -> None:
    jammed = _body(jammed_constant_loops(SPMM, "spmm"))
    assert "float sum_jam0 = 0.0f; float sum_jam1 = 0.0f; float sum_jam2 = 0.0f; float sum_jam3 = 0.0f; " \
           "for (int e = ptr[row]; e < ptr[row + 1]; ++e) { float b_jam0 = B[col[e] * NC + 0]; " \
           "sum_jam0 += val[e] * b_jam0; float b_jam1 = B[col[e] * NC + 1];" in jammed
    assert jammed.endswith("C[row * NC + 0] = sum_jam0; C[row * NC + 1] = sum_jam1; C[row * NC + 2] = sum_jam2; "
                           "C[row * NC + 3] = sum_jam3; } }")
    # an unsigned counter keeps its type in each copy; `<=` bounds count the last value
    unsigned = _body(jammed_constant_loops(SPMM.replace("int c = 0; c < NC;", "unsigned c = 1; c <= 2;"), "spmm"))
    assert "C[row * NC + ((unsigned)1)] = sum_jam0; C[row * NC + ((unsigned)2)] = sum_jam1;" in unsigned


@pytest.mark.parametrize("old,new", [
    ("c < NC;", "c < nc;"),  # bounds known only at run time
    ("c < NC;", "c < 17;"),  # too many copies
    ("e = ptr[row];", "e = ptr[row] + c;"),  # the inner range differs per column
    ("e < ptr[row + 1];", "e < ptr[row + 1] && sum < 4.0f;"),  # ... and per column's sum
    ("sum += val[e] * b;", "sum += val[e] * b; seen += b;"),  # a value carried across columns
    ("sum += val[e] * b;", "sum += val[e] * b; if (b > 3.9f) break;"),  # an early exit
    ("sum += val[e] * b;", "sum += val[e] * b; C[e] = b;"),  # a store in the inner loop
    ("C[row * NC + c] = sum;", "C[row * NC + c] = sum + C[row * NC];"),  # the stored array is read
    ("C[row * NC + c] = sum;", "C[row * NC + c] = sum; c += 1;"),  # the counter changes
    ("C[row * NC + c] = sum;", "C[row * NC + c] = sum; seen = sum;"),  # not a store to memory
    ("float sum = 0.0f;", "float sum = 0.0f; float *p = &sum;"),  # an address escapes
    ("C[row * NC + c] = sum;", "C[row * NC + c] = sum; for (int k = 0; k < 2; ++k) C[k] = 0;"),  # a second loop
])
def test_near_misses_are_not_jammed(old: str, new: str) -> None:
    assert old in SPMM
    source = SPMM.replace(old, new)
    assert jammed_constant_loops(source, "spmm") == source, new
