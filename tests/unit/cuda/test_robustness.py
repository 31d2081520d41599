"""Bad input never crashes or hangs the parser: junk, half-typed code, deep nesting, huge files."""

from __future__ import annotations

import random
import time

import pytest

from regrapht.cuda import decode_source, parse_source
from regrapht.rules import analyze_text

HALF_TYPED = [
    "",
    "__global__ void k(float *a",
    "__global__ void k(float *a) { a[threadIdx.x",
    "__global__ void k(float *a) { /* unterminated comment",
    '__global__ void k(char *a) { const char *s = "unterminated string',
    "#define M(x) \\\n  x + \\\n",
    "__global__ void k(float *a) { k2<<<1, ",
    "__global__ void k(float *a) { for (int i = 0; i < ; i++) { a[i] = } }",
    "template <typename T> __global__",
    "class A { void f() { int x = 1; } };\nint main() { return 0; }\n",  # plain C++, no CUDA
    "}}}}{{{{ <<< >>> [[[ ]]] ;;; __syncthreads() atomicAdd(",
]


@pytest.mark.parametrize("text", HALF_TYPED)
def test_half_typed_code_parses(text: str) -> None:
    model = parse_source(text)
    analyze_text(text)
    assert model.line_count >= 1


def test_half_typed_kernel_still_has_facts() -> None:
    model = parse_source("__global__ void k(float *a, int n) {\n  int i = threadIdx.x * 2;\n  a[i] = 1.0f;\n  if (")
    assert [k.name for k in model.kernels] == ["k"]
    assert model.has_errors
    (access,) = model.kernels[0].accesses
    assert access.tid_x.kind == "constant" and access.tid_x.value == 2


def test_binary_junk_and_non_utf8_bytes() -> None:
    junk = bytes(random.Random(7).randrange(256) for _ in range(20000))
    text, warnings = decode_source(junk)
    assert warnings and "UTF-8" in warnings[0]
    parse_source(text)
    analyze_text(text)
    text, warnings = decode_source(b"\xef\xbb\xbf__global__ void k() {}\n")
    assert text.startswith("__global__") and warnings == []
    text, warnings = decode_source(b"__global__ void k() { /* \xff */ }\x00")
    assert len(warnings) == 2 and parse_source(text).kernels[0].name == "k"


def test_lone_surrogates_do_not_crash() -> None:
    model = parse_source('__global__ void k(float *y) { /* \ud800 */ y[0] = 1.0; }')
    assert model.kernels[0].float_literals[0].text == "1.0"


def test_deep_nesting_is_walked_without_recursion_limits() -> None:
    depth = 500
    body = "if (threadIdx.x) {" * depth + "a[threadIdx.x] = 1.0f; __syncthreads();" + "}" * depth
    parens = "(" * depth + "threadIdx.x" + ")" * depth
    text = f"__global__ void k(float *a) {{ {body} a[{parens}] = 2.0f; }}"
    kernel = parse_source(text).kernels[0]
    assert kernel.syncs[0].under_thread_branch
    assert len(kernel.accesses) == 2
    analyze_text(text)


def test_ten_megabyte_file_parses() -> None:
    table = ", ".join(f"{i}.5f" for i in range(1_000_000))
    kernel = "__global__ void k(float *a, int n) { int i = threadIdx.x; if (i < n) a[i] = 2.0 * a[i]; }\n"
    text = f"__constant__ float table[] = {{{table}}};\n" + kernel * 20
    assert len(text) > 9_000_000
    start = time.monotonic()
    model = parse_source(text)
    assert len(model.kernels) == 20
    assert time.monotonic() - start < 60


def test_function_count_is_capped_with_a_warning() -> None:
    from regrapht.cuda.parse import ModelBuilder, encode_source, make_parser

    source = encode_source("__global__ void k(float *a) { a[0] = 1.0f; }\n" * 50)
    model = ModelBuilder(max_functions=10).build(make_parser().parse(source), source)
    assert len(model.kernels) == 10
    assert any("only the first 10" in w for w in model.warnings)
