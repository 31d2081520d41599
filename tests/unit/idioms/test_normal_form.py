"""The recogniser's normal form (idioms/normal_form.py): sums kept in an output element become
register sums; near-misses are left as written."""

from __future__ import annotations

import pytest

from regrapht.idioms.normal_form import normal_form, scalarised_accumulations

HEAD = "__global__ void k(const float *A, const float *v, float *y, int m, int n) {\n" \
       "    int j = blockIdx.x * blockDim.x + threadIdx.x;\n    if (j >= n) return;\n"


def kernel(body: str) -> str:
    return HEAD + "    " + body + "\n}\n"


@pytest.mark.parametrize("update", ["y[j] += A[i * n + j] * v[i];", "y[j] = y[j] + A[i * n + j] * v[i];"])
def test_a_sum_kept_in_the_output_gets_a_register(update: str) -> None:
    source = kernel(f"y[j] = 0.0f;\n    for (int i = 0; i < m; ++i) {{ {update} }}")
    rewritten = scalarised_accumulations(source, "k")
    assert "float y_running = y[j];" in rewritten and "y[j] = y_running;" in rewritten
    assert "y_running += A[i * n + j] * v[i];" in rewritten or "y_running = y_running + A[i * n + j]" in rewritten
    assert rewritten.index("float y_running") < rewritten.index("for (") < rewritten.index("y[j] = y_running;")


def test_names_do_not_clash_and_pointer_walks_come_first() -> None:
    source = kernel("float y_running = 1.0f; const float *p = A + j;\n"
                    "    for (int i = 0; i < m; ++i) { y[j] += *p * v[i] + y_running; p += n; }")
    rewritten = normal_form(source, "k")
    assert "float y_running_ = y[j];" in rewritten
    assert "y_running_ += *(p + (long long)(i - (0)) * (n)) * v[i] + y_running;" in rewritten


@pytest.mark.parametrize("body", [
    # the element moves with the loop (a different element each step)
    "for (int i = 0; i < m; ++i) { y[j + i] += A[i * n + j]; }",
    # the loop reads the output array elsewhere
    "for (int i = 0; i < m; ++i) { y[j] += A[i * n + j] * y[0]; }",
    # the index is assigned in the loop
    "int t = j; for (int i = 0; i < m; ++i) { y[t] += A[i * n + j]; t = t + 1; }",
    # a return inside the loop would skip the store
    "for (int i = 0; i < m; ++i) { y[j] += A[i * n + j]; if (A[i] > 5.0f) return; }",
    # a const (input) array
    "float s = 0.0f; for (int i = 0; i < m; ++i) { s += A[i * n + j]; }",
])
def test_near_misses_are_left_as_written(body: str) -> None:
    source = kernel(body)
    assert scalarised_accumulations(source, "k") == source
