"""`regrapht spec infer` on a kernel defined in a header: the launches come from a `.cu` of the
compile database that includes it, and the header's typedefs and flags are used."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

from regrapht.commands.spec import run_infer
from regrapht.spec.model import parse_spec


def test_a_header_kernel_is_inferred_from_the_cu_that_includes_it(tmp_path: Path) -> None:
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "ops.cuh").write_text(
        "#pragma once\ntypedef float real;\n"
        "__global__ void axpy(real* y, const real* x, real a, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += a * x[i]; }\n")
    (tmp_path / "main.cu").write_text(
        '#include "ops.cuh"\nvoid run(float* y, const float* x, int n) { axpy<<<(n + 127) / 128, 128>>>(y, x, 2.0f, n); }\n')
    (tmp_path / "compile_commands.json").write_text(json.dumps([
        {"directory": str(tmp_path), "file": "main.cu", "arguments": ["nvcc", "-I", "include", "-c", "main.cu"]}]))
    args = argparse.Namespace(file=str(tmp_path / "include" / "ops.cuh"), kernel="axpy", output=None, force=False,
                              compile_commands=str(tmp_path / "compile_commands.json"), include_dirs=[], defines=[])
    out = io.StringIO()
    assert run_infer(args, out) == 0
    kernel = parse_spec(out.getvalue()).kernels[0]
    assert kernel.grid == ("(n + 127) / 128",) and kernel.block == (128,)
    assert [a.ctype.spelled() for a in kernel.args] == ["float*", "const float*", "float", "int"]
    assert kernel.guessed == () and kernel.args[0].role == "inout"
