"""idioms.walk_loops: loops that dereference pointers as they advance them, written with an index."""

from __future__ import annotations

from regrapht.idioms.syntax import kernel_syntax
from regrapht.idioms.walk_loops import indexed_walk_loops


def _indexed(body: str, params: str = "const float *in, float *out, int n") -> str | None:
    source = f"__global__ void k({params}) {{\n{body}\n}}\n"
    kernel = kernel_syntax(source, "k")
    assert kernel is not None
    found = indexed_walk_loops(kernel)
    return None if found is None else " ".join(found.split("{", 1)[1].split())


def test_count_down_with_post_increments() -> None:
    assert _indexed("float a = 0; while (n--) { a += *in++; *out++ = a; }") == \
        "float a = 0; for (long long walk_k = 0; walk_k < n; ++walk_k) { a += in[walk_k]; out[walk_k] = a; } }"


def test_walk_to_the_end_with_the_increments_in_the_update() -> None:
    found = _indexed("const float *p = in + 2; float *q = out; for (; p < in + n; ++p, ++q) *q = *p;")
    assert found is not None and "walk_k < (n) - (2)" in found and "out[walk_k] = in[(2) + walk_k];" in found


def test_counted_loop_keeps_its_counter_and_reads_after_an_advance_see_the_next_element() -> None:
    found = _indexed("for (int i = 1; i < n; ++i) { float x = *in++; out[i] = x + *in; }")
    assert found is not None and "float x = in[(i - (1))];" in found and "out[i] = x + in[(i - (1)) + 1];" in found


def test_walks_used_otherwise_are_left_alone() -> None:
    assert _indexed("while (n--) { *out++ = in[1]; in++; in++; }") is None  # advanced twice
    assert _indexed("while (n--) { if (*in > 0) *out++ = *in; in++; }") is None  # advanced on some
    assert _indexed("float *q = out; while (n--) { *q++ = *in++; } out[0] = *q;") is None  # used after
    assert _indexed("while (n--) { *out++ = *in++; } out[0] = n;") is None  # the count used after
    assert _indexed("for (int i = 0; i < n; ++i) { for (int j = 0; j < 2; ++j) *out++ = *in++; }") is None
