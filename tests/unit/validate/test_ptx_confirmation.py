"""PTX per source line (validate/ptx.py) and the compiler's verdicts on findings
(rules/confirm.py); the last tests use the real nvcc (marker `nvcc`)."""

from __future__ import annotations

import io
import shutil
from argparse import Namespace
from pathlib import Path

import pytest

from regrapht.commands.analyze import run as analyze_run
from regrapht.rules import analyze_text
from regrapht.rules.confirm import confirm_findings
from regrapht.validate.ptx import parse_ptx, short_name

PTX = """
.visible .entry _Z4gelaPKfPfi(
\t.param .u64 _Z4gelaPKfPfi_param_0
)
{
\t.reg .f64 \t%fd<9>;
\t.loc\t1 3 5
\tld.global.nc.f32 \t%f1, [%rd5];
\t.loc\t1 4 9
\tcvt.f64.f32 \t%fd1, %f1;
\tmul.f64 \t%fd2, %fd1, 0d3FE0000000000000;
\tcvt.rn.f32.f64 \t%f2, %fd2;
\t.loc\t2 90 1
\tmul.f64 \t%fd3, %fd1, %fd1;
\t.loc\t1 5 9
\tld.shared.f32 \t%f64, [%r6+40];
\t@%p1 bra \t$L__BB0_2;
\t.loc\t1 6 9
\tld.global.v4.f32 \t{%f3, %f4, %f5, %f6}, [%rd7];
\tbar.sync \t0;
\t.loc\t1 7 9
\tst.global.f32 \t[%rd8], %f2;
}
\t.file\t1 "/tmp/regrapht-ptx-x/kernel.cu"
\t.file\t2 "/usr/local/cuda/include/cuda_fp16.hpp"
"""


def test_parse_ptx_attributes_instructions_to_lines_of_the_main_file() -> None:
    facts = parse_ptx(PTX, "kernel.cu")
    load = facts.at(3)
    assert load is not None and load.global_widths == [4] and load.functions == {"gela"}
    double = facts.at(4)
    assert double is not None and double.f64 == 3  # the header's mul.f64 (file 2) is not line 4's
    shared = facts.at(5)
    assert shared is not None and shared.shared_accesses == 1 and shared.f64 == 0  # `%f64` is a register
    vector = facts.at(6)
    assert vector is not None and vector.global_widths == [16] and vector.barriers == 1
    assert facts.at(90) is None


def test_short_names() -> None:
    assert short_name("_Z9gelu_tanhPKfPfi") == "gelu_tanh"
    assert short_name("_ZN3ops4stepEv").startswith("ops")
    assert short_name("saxpy") == "saxpy"


SOURCE = """__global__ void gela(const float *x, float *y, int n, int rows) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i * rows];
    y[i] = v * 0.5 * v;
    y[i] = y[i] * 0.5;
    float4 w = reinterpret_cast<const float4 *>(x)[i * 4];
    y[i * rows] = v;
}"""


def test_confirm_findings_upgrades_refutes_and_leaves_unknown_lines() -> None:
    findings = analyze_text(SOURCE)
    confirmed = {(f.rule, f.span.start.line + 1): f for f in confirm_findings(findings, parse_ptx(PTX, "kernel.cu"))}
    chain = confirmed[("R007", 4)]
    assert chain.severity == "warning" and "Confirmed by nvcc: 3 f64 instructions in gela." in chain.message
    narrowed = confirmed[("R007", 5)]
    # The hint said nvcc narrows `y[i] * 0.5`: no f64 code agrees with it.
    assert narrowed.severity == "hint" and "nvcc shows: no f64 instruction" in narrowed.message
    assert narrowed.message.endswith("(narrowed to float).")
    strided = confirmed[("R001", 3)]
    assert strided.severity == "warning" and "Confirmed by nvcc: 1 4-byte global access in gela." in strided.message
    store = confirmed[("R001", 7)]
    assert "nvcc" in store.message  # line 7 has a 4-byte st.global
    untouched = [f for f in findings if f.rule not in ("R001", "R002", "R007", "R008")]
    assert all(confirmed[(f.rule, f.span.start.line + 1)] == f for f in untouched)


nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")


@pytest.mark.nvcc
@nvcc
def test_analyze_confirm_with_the_real_nvcc(tmp_path: Path) -> None:
    path = tmp_path / "saxpy.cu"
    path.write_text("""__global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + 1.0 / n + y[i] * 0.1;
    if (i < n) y[i] = y[i] * 2.0;
}
""")
    out, err = io.StringIO(), io.StringIO()
    assert analyze_run(Namespace(file=str(path), json=False, confirm=True, arch="sm_90"), out=out, err=err) == 0
    lines = [line for line in out.getvalue().splitlines() if "R007" in line]
    assert any(":3:" in line and "warning" in line and "f64 instructions in saxpy" in line for line in lines)
    assert any(":4:" in line and "hint" in line and "(narrowed to float)" in line for line in lines)


@pytest.mark.nvcc
@nvcc
def test_analyze_confirm_warns_when_the_file_does_not_compile(tmp_path: Path) -> None:
    path = tmp_path / "broken.cu"
    path.write_text("__global__ void k(float *y) { y[threadIdx.x] = y[threadIdx.x] * 0.1 + missing; }\n")
    out, err = io.StringIO(), io.StringIO()
    assert analyze_run(Namespace(file=str(path), json=False, confirm=True, arch="sm_90"), out=out, err=err) == 0
    assert "could not compile" in err.getvalue()
    assert "R007" in out.getvalue() and "nvcc" not in out.getvalue()
