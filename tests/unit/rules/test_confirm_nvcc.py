"""The rules' claims against what the real nvcc generates (marker `nvcc`): R007's severity agrees
with the f64 instructions of each line (a hint only where nvcc narrows the literal to float),
explicit casts make no f64 code and no finding, and R015's unrolling hint survives `--confirm`
only on a loop nvcc kept (a backward branch), never on one it unrolled fully. The compile uses
the same flags path as the editor (validate/compile_db.py's `NO_FLAGS` when there is no database)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from regrapht.rules import analyze_text
from regrapht.rules.confirm import confirm_findings
from regrapht.validate.compile_db import NO_FLAGS
from regrapht.validate.compiler import Compiler, find_demangler, find_nvcc
from regrapht.validate.ptx import PtxFacts, ptx_facts

pytestmark = [pytest.mark.nvcc, pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")]

# One kernel per line so that each line's f64 count is its own.
LITERALS = """template <typename T> __device__ T twice(T v) { return T(2.0) * v; }
__global__ void one_exact(float *y) { int i = threadIdx.x; y[i] = y[i] * 0.5; }
__global__ void chain(float *y) { int i = threadIdx.x; float x = y[i + 1]; y[i] = y[i] * 0.5 * x; }
__global__ void two_halves(float *y) { int i = threadIdx.x; float x = y[i + 1]; y[i] = 0.5 * y[i] + 0.5 * x; }
__global__ void nested(float *y) { int i = threadIdx.x; float x = y[i + 1]; y[i] = x * (y[i] * 2.0); }
__global__ void identity(float *y) { int i = threadIdx.x; float x = y[i + 1]; y[i] = x + y[i] * 1.0; }
__global__ void one_add(float *y) { int i = threadIdx.x; float x = y[i + 1]; y[i] = 1.5 + x; }
__global__ void exact_chain(float *y) { int i = threadIdx.x; float x = y[i + 1]; y[i] = (1.5 + x) * x; }
__global__ void inexact(float *y) { int i = threadIdx.x; y[i] = y[i] * 0.1; }
__global__ void casts(float *y) { int i = threadIdx.x; y[i] = static_cast<float>(0.5) * y[i] + float(0.25) * y[i]; }
__global__ void templated(float *y) { int i = threadIdx.x; y[i] = twice<float>(y[i]) + y[i]; }
__global__ void reciprocal(float *y) { int i = threadIdx.x; y[i] = 1.0 / y[i]; }
__global__ void ninth(float *y) { int i = threadIdx.x; float x = y[i + 1]; y[i] = x * (1.0 / 9.0); }
__global__ void by_one(float *y) { int i = threadIdx.x; float x = y[i + 1]; y[i] = x + y[i] / 1.0; }
"""


def _facts(tmp_path: Path, name: str, text: str) -> PtxFacts:
    nvcc = find_nvcc(os.environ)
    assert nvcc is not None
    path = tmp_path / name
    path.write_text(text)
    facts = ptx_facts(Compiler(nvcc, demangler=find_demangler(nvcc, os.environ)), text, path, "sm_90", NO_FLAGS)
    assert facts is not None
    return facts


def test_r007_severity_agrees_with_the_f64_instructions_of_each_line(tmp_path: Path) -> None:
    facts = _facts(tmp_path, "literals.cu", LITERALS)
    findings = {f.span.start.line + 1: f for f in analyze_text(LITERALS) if f.rule == "R007"}
    for line in (*range(2, 10), 12, 13, 14):
        code = facts.at(line)
        assert code is not None and code.instructions, line
        finding = findings.get(line)
        assert finding is not None, line
        # A hint says nvcc narrows the literal: exactly where the line has no f64 instruction.
        assert (finding.severity == "hint") == (code.f64 == 0), (line, finding.severity, code.f64)
    # Explicit casts and T(2.0) are conversions: no finding, and nvcc makes no f64 code for them.
    for line in (1, 10, 11):
        assert line not in findings
        code = facts.at(line)
        assert code is None or code.f64 == 0, line


def test_a_confirmed_r007_never_says_the_compiler_can_narrow_it(tmp_path: Path) -> None:
    facts = _facts(tmp_path, "literals.cu", LITERALS)
    for finding in confirm_findings(analyze_text(LITERALS), facts):
        if finding.rule == "R007" and "Confirmed by nvcc" in finding.message:
            assert "can narrow" not in finding.message and finding.severity == "warning"
        if finding.rule == "R007" and finding.severity == "hint":
            assert "Not confirmed" not in finding.message  # a hint says nvcc narrows it: nvcc agreed
            assert "can narrow" in finding.message and "(narrowed to float)." in finding.message


LOOPS = """__global__ void horner(float *__restrict__ y, const float *__restrict__ c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = y[i];
    float acc = 0.0f;
    for (int k = 0; k < 16; k++) {
        acc = acc * x + c[k];
    }
    y[i] = acc;
}

__global__ void staged(float *__restrict__ y, const float *__restrict__ c)
{
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = y[blockIdx.x * 256 + t];
    for (int k = 0; k < 32; k++) {
        __syncthreads();
        float v = s[(t + k * 7) & 255] * c[k] + sinf(s[(t * 3 + k) & 255]);
        __syncthreads();
        s[t] += v * expf(v) / (1.0f + v * v);
    }
    y[blockIdx.x * 256 + t] = s[t];
}

__global__ void short_loop(float *__restrict__ y, const float *__restrict__ c)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < 8; k++) {
        acc += c[k] * y[i];
    }
    y[i] = acc;
}
"""


def test_r015_is_refuted_where_nvcc_unrolled_the_loop_and_kept_where_it_did_not(tmp_path: Path) -> None:
    findings = [f for f in analyze_text(LOOPS) if f.rule == "R015"]
    # Source: the 16- and 32-trip loops are hints; the 8-trip loop is one nvcc unrolls by itself.
    assert sorted(f.span.start.line + 1 for f in findings) == [6, 17]
    facts = _facts(tmp_path, "loops.cu", LOOPS)
    # nvcc unrolled the 8-trip loop fully: no backward branch on its lines (what the silence relies on).
    assert not any(code.backward_branches for _, code in facts.between(30, 32))
    confirmed = [f for f in confirm_findings(findings, facts) if f.rule == "R015"]
    assert [f.span.start.line + 1 for f in confirmed] == [17]
    (kept,) = confirmed
    assert kept.severity == "hint" and "nvcc kept it as a loop" in kept.message
    assert "nvcc shows: a backward branch at line" in kept.message and "in staged" in kept.message
