"""Pointer walks read as indexing (idioms/pointer_walks.py): which walks are rewritten, and the
near-misses left as written."""

from __future__ import annotations

import pytest

from regrapht.idioms.items import item_program
from regrapht.idioms.pointer_walks import indexed_pointer_walks
from regrapht.idioms.syntax import kernel_syntax

HEAD = "__global__ void k(const float *A, const float *v, float *out, int m, int n) {\n" \
       "    int j = blockIdx.x * blockDim.x + threadIdx.x;\n    if (j >= n) return;\n"


def kernel(body: str) -> str:
    return HEAD + body + "\n}\n"


def test_a_bumped_pointer_becomes_an_offset() -> None:
    source = kernel("const float *p = A + j; float s = 0.0f;\n"
                    "for (int i = 0; i < m; ++i) { s += *p * v[i]; p += n; }\nout[j] = s;")
    indexed = indexed_pointer_walks(source, "k")
    assert "s += *(p + (long long)(i - (0)) * (n)) * v[i];" in indexed and "p += n" not in indexed
    syntax = kernel_syntax(indexed, "k")
    assert syntax is not None
    found = item_program(syntax)
    assert found is not None
    [read] = [a for a in found.loops[0].reads if a.array == "A"]
    assert read.index is not None and read.index.coefficient("@element").kind == "runtime"  # down a column


def test_update_clause_subscripts_and_while_loops() -> None:
    update = kernel("const float *col = &A[j]; float s = 0.0f;\n"
                    "for (int i = 1; i < m; i++, col += n) s += col[2] * v[i];\nout[j] = s;")
    indexed = indexed_pointer_walks(update, "k")
    assert "for (int i = 1; i < m; i++) s += col[(long long)(i - (1)) * (n) + (2)] * v[i];" in indexed
    two = kernel("const float *a = A + j; const float *x = v; float s = 0.0f; int i = 0;\n"
                 "while (i < m) { s += *a * *x; a = a + n; x++; ++i; }\nout[j] = s;")
    indexed = indexed_pointer_walks(two, "k")
    assert "*(a + (long long)(i - (0)) * (n))" in indexed and "*(x + (long long)(i - (0)) * (1))" in indexed
    assert "x++" not in indexed and "++i;" in indexed


def test_a_dereferenced_post_increment_is_one_step_per_iteration() -> None:
    source = kernel("const float *p = A + j; const float *w = v; float s = 0.0f;\n"
                    "for (int i = 0; i < m; ++i) { s += *p * *w++; p += n; }\nout[j] = s;")
    indexed = indexed_pointer_walks(source, "k")
    assert "s += *(p + (long long)(i - (0)) * (n)) * *(w + (long long)(i - (0)) * (1));" in indexed


@pytest.mark.parametrize("body", [
    # `*w++` evaluated only on some iterations
    "const float *w = v; float s = 0.0f;\nfor (int i = 0; i < m; ++i) { s += A[i * n + j] > 0 ? *w++ : 0.0f; }\nout[j] = s;",
    # `*w++` twice per iteration
    "const float *w = v; float s = 0.0f;\nfor (int i = 0; i < m; ++i) { s += *w++ * *w++; }\nout[j] = s;",
    # bumped before its use: the first element read is A[j + n], not A[j]
    "const float *p = A + j; float s = 0.0f;\nfor (int i = 0; i < m; ++i) { p += n; s += *p * v[i]; }\nout[j] = s;",
    # used after the loop (its final value matters)
    "const float *p = A + j; float s = 0.0f;\nfor (int i = 0; i < m; ++i) { s += *p * v[i]; p += n; }\nout[j] = s + *p;",
    # a stride loaded from memory
    "const float *p = A + j; float s = 0.0f;\nfor (int i = 0; i < m; ++i) { s += *p * v[i]; p += (int)v[0]; }\nout[j] = s;",
    # bumped only on some iterations
    "const float *p = A + j; float s = 0.0f;\nfor (int i = 0; i < m; ++i) { s += *p * v[i]; if (s > 0) p += n; }\nout[j] = s;",
    # bumped twice
    "const float *p = A + j; float s = 0.0f;\nfor (int i = 0; i < m; ++i) { s += *p * v[i]; p += n; p += 1; }\nout[j] = s;",
    # the counter steps by two
    "const float *p = A + j; float s = 0.0f;\nfor (int i = 0; i < m; i += 2) { s += *p * v[i]; p += n; }\nout[j] = s;",
])
def test_near_misses_are_left_as_written(body: str) -> None:
    source = kernel(body)
    assert indexed_pointer_walks(source, "k") == source
