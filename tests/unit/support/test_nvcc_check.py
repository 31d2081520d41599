"""`nvcc_check.compile_together` passes exactly when every source compiles alone: sources share
an nvcc run only where that cannot hide a missing include or leak a macro, and a clash between
neighbours in a shared run does not fail the sources that compile alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from nvcc_check import _split, compile_together, needs_nvcc

HALF = "#include <cuda_fp16.h>\n__global__ void k(__half *x) { x[threadIdx.x] = __float2half(1.0f); }\n"
HALF_2 = HALF.replace("1.0f", "2.0f")
NO_INCLUDE = "__global__ void k(__half *x) { x[threadIdx.x] = __float2half(3.0f); }\n"
MACRO = "#define SCALE 2.0f\n__global__ void k(float *x) { x[threadIdx.x] *= SCALE; }\n"
USES_MACRO = "__global__ void k(float *x) { x[threadIdx.x] *= SCALE; }\n"
# 40 KB of constant memory each: two in one unit exceed the 64 KB a module may have
TABLE = "__constant__ float table[10240];\n__global__ void k(float *x) {{ x[threadIdx.x] = table[{}]; }}\n"


def test_only_sources_that_mean_the_same_beside_others_share_a_unit() -> None:
    half = _split(HALF)
    assert half is not None and half.includes == ("#include <cuda_fp16.h>",) and "#include" not in half.body
    assert _split(NO_INCLUDE) is not None and _split(NO_INCLUDE).includes == ()  # type: ignore[union-attr]
    macro = _split(MACRO)  # the macro is undefined after the source: it cannot reach a neighbour
    assert macro is not None and macro.body.endswith("#undef SCALE")
    assert _split("#define IDX(i, j) ((i) * 4 + (j))\n").body.endswith("#undef IDX")  # type: ignore[union-attr]
    assert _split('extern "C" __global__ void k() {}') is None
    assert _split("#undef min\n") is None and _split("#error no\n") is None
    assert _split("#ifdef X\n__global__ void k() {}\n#endif\n") is not None
    assert _split("__device__ int f();\n#include <cuda_fp16.h>\n") is None  # an include after code
    assert _split("// note\n#include <cuda_fp16.h>\n__global__ void k() {\n#pragma unroll\n}\n") is not None


@pytest.mark.nvcc
@needs_nvcc
def test_a_source_that_fails_alone_fails_beside_sources_that_pass(tmp_path: Path) -> None:
    compile_together([HALF, HALF_2, MACRO], tmp_path, "good")
    with pytest.raises(AssertionError, match="missing include"):
        compile_together([HALF, HALF_2, NO_INCLUDE], tmp_path, "include", labels=["a", "b", "missing include"])
    with pytest.raises(AssertionError, match="uses the macro"):
        compile_together([MACRO, USES_MACRO], tmp_path, "macro", labels=["defines", "uses the macro"])


@pytest.mark.nvcc
@needs_nvcc
def test_a_clash_between_neighbours_fails_no_source(tmp_path: Path) -> None:
    compile_together([TABLE.format(0), TABLE.format(1)], tmp_path, "tables")
    assert (tmp_path / "tables_0.cu").is_file() and (tmp_path / "tables_alone1.cu").is_file()  # shared, then alone
