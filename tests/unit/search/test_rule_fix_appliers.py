"""The appliers that are adapters over the rules' fixes (`rules/fixes.py`): what they change,
and the cases where they now follow the rules' matchers (named in the commit that made them)."""

from __future__ import annotations

import ast
from pathlib import Path

from regrapht.search.appliers import ApplierInput
from regrapht.search.appliers.common import masked_model
from regrapht.search.appliers.fast_math import FastMath
from regrapht.search.appliers.loops import LoopUnrolling
from regrapht.search.appliers.qualifiers import RestrictPointers
from regrapht.search.appliers.shared_padding import SharedMemoryPadding
from regrapht.spec.launch import LaunchConfig

APPLIERS_DIR = Path(__file__).resolve().parents[3] / "server/regrapht/search/appliers"
LAUNCH = LaunchConfig(("(n + 255) / 256",), ("256",))


def given(source: str, kernel: str = "k", launch: LaunchConfig = LAUNCH) -> ApplierInput:
    return ApplierInput(source, kernel, launch)


def test_no_applier_module_imports_re() -> None:
    for path in APPLIERS_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert "re" not in names, path.name


def test_fast_math_suffixes_literals_renames_calls_and_keeps_comments() -> None:
    source = ("__global__ void k(float *y, const float *x, int n) {\n"
              "    int i = blockIdx.x * blockDim.x + threadIdx.x;  // one point\n"
              "    if (i < n) y[i] = exp(x[i] * 0.5) + 1e-3 + sqrtf(x[i]);\n}\n")
    plain, fast = FastMath().apply(given(source))
    assert "y[i] = expf(x[i] * 0.5f) + 1e-3f + sqrtf(x[i]);" in plain.source and "// one point" in plain.source
    assert "__expf(x[i] * 0.5f)" in fast.source
    only_comments = "__global__ void k(float *y) {\n    y[0] = 0.5f;  // 0.5 and exp(x)\n}\n"
    assert FastMath().apply(given(only_comments)) == []  # it used to offer the body without its comments


def test_unrolling_leaves_a_loop_with_a_pragma_and_reads_inclusive_bounds() -> None:
    source = ("__global__ void k(float *y) {\n#pragma unroll 8\n    for (int j = 0; j < 64; ++j) y[j] = 0;\n"
              "    for (int d = -1; d <= 1; ++d) y[d + 1] += 1;\n    for (int m = 0; m < n; m++) y[m] *= 2;\n}\n")
    (rewrite,) = LoopUnrolling().apply(given(source))
    assert rewrite.source.count("#pragma unroll 8") == 1
    assert "    #pragma unroll\n    for (int d = -1; d <= 1; ++d)" in rewrite.source
    assert "    #pragma unroll 4\n    for (int m = 0;" in rewrite.source
    assert rewrite.note == "#pragma unroll on 2 loop(s)"


def test_padding_pads_only_tiles_a_warp_reads_down_a_column() -> None:
    source = ("__global__ void k(float *out, const float *in) {\n"
              "    __shared__ float walked[32][32];\n    __shared__ float rows[32][32];\n"
              "    walked[threadIdx.y][threadIdx.x] = in[threadIdx.x];\n"
              "    rows[threadIdx.y][threadIdx.x] = in[threadIdx.x];\n    __syncthreads();\n"
              "    out[threadIdx.x] = walked[threadIdx.x][threadIdx.y] + rows[threadIdx.y][threadIdx.x];\n}\n")
    (rewrite,) = SharedMemoryPadding().apply(given(source, launch=LaunchConfig(("1",), ("32", "32"))))
    assert "walked[32][33]" in rewrite.source and "rows[32][32]" in rewrite.source
    assert rewrite.note == "padded shared walked by one column"


def test_restrict_keeps_the_parameter_layout() -> None:
    source = 'extern "C" __global__ void k(const float *x,\n                             float * y, int n) {\n    y[0] = x[0];\n}\n'
    (rewrite,) = RestrictPointers().apply(given(source))
    assert 'k(const float *__restrict__ x,\n                             float *__restrict__ y, int n)' in rewrite.source
    assert all(e.span.start.line <= 1 for e in rewrite.edits)


def test_restrict_reads_the_body_only_of_an_extern_c_kernel() -> None:
    """The restrict adapter runs on every variant of the jammed and column-stencil appliers: it
    reads parameters from the headers-only model, and the body's facts (the pointers written,
    for `const`) only where `const` may be added (extern "C")."""
    body = "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = 2.0f * x[i];\n}\n"
    plain = f"__global__ void k(float *x, float *y, int n) {body}"
    exported = f'extern "C" __global__ void k(float *x, float *y, int n) {body}'
    masked_model.cache_clear()
    (rewrite,) = RestrictPointers().apply(given(plain))
    assert "k(float *__restrict__ x, float *__restrict__ y, int n)" in rewrite.source
    assert masked_model.cache_info().misses == 0  # no whole model of the text was built
    (rewrite,) = RestrictPointers().apply(given(exported))
    assert "k(const float *__restrict__ x, float *__restrict__ y, int n)" in rewrite.source  # y is written
    assert masked_model.cache_info().misses == 1
