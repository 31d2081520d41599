"""R007 on a line a kernel runs once per thread (issue 27): a double literal outside every loop of
a kernel whose global memory accesses all repeat in loops costs a few f64 instructions per
thread, not per element: a hint, which nvcc's f64 code confirms without making it a warning. A
literal in the loop, in a kernel that handles one element per thread, in a device function (its
caller may call it per element) or in a kernel with memory work outside its loops stays a
warning. The kernels are written for these tests."""

from __future__ import annotations

from regrapht.rules import analyze_text
from regrapht.rules.confirm import confirm_findings
from regrapht.validate.ptx import LineCode, PtxFacts


def r007(text: str) -> list[tuple[str, int]]:
    return [(f.severity, f.span.start.line + 1) for f in analyze_text(text) if f.rule == "R007"]


GRID_STRIDE = """__global__ void keep_scaled(const float *x, float *y, int n, float drop) {
    const float keep = 1. / (1. - drop);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = x[i] * keep;
    }
}"""


def test_r007_a_scale_computed_before_a_grid_stride_loop_is_a_hint() -> None:
    assert r007(GRID_STRIDE) == [("hint", 2)]
    (finding,) = [f for f in analyze_text(GRID_STRIDE) if f.rule == "R007"]
    assert "once per thread" in finding.message and "`keep_scaled`" in finding.message
    assert "narrow" not in finding.message  # nvcc does not narrow a division chain: never claimed
    assert finding.fixes and len(finding.fixes[0].edits) == 2


def test_r007_after_a_reduction_loop_that_does_all_the_loads() -> None:
    text = """__global__ void row_norm(const float *x, float *inv, int cols) {
    __shared__ float part[256];
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = x[blockIdx.x * cols + c];
        sum += v * v;
    }
    sum += 1e-6;
    part[threadIdx.x] = sum;
    __syncthreads();
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        inv[blockIdx.x * cols + c] = part[0] * x[blockIdx.x * cols + c];
    }
}"""
    assert r007(text) == [("hint", 8)]


def test_r007_stays_a_warning_where_it_runs_per_element() -> None:
    one_element = """__global__ void keep_one(const float *x, float *y, int n, float drop) {
    const float keep = 1. / (1. - drop);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * keep;
}"""
    in_the_loop = GRID_STRIDE.replace("x[i] * keep", "x[i] * 0.1")
    device = GRID_STRIDE.replace("__global__", "__device__")
    store_after = """__global__ void blur(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < 16; k++) acc += x[i + k];
    y[i] = acc * 0.1;
}"""
    one_trip = GRID_STRIDE.replace(
        "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)",
        "int i = blockIdx.x * blockDim.x + threadIdx.x;\n    for (int k = 0; k < 1; k++)")
    assert r007(one_element) == [("warning", 2)]
    assert r007(in_the_loop) == [("hint", 2), ("warning", 4)]
    assert r007(device) == [("warning", 2)]
    assert r007(store_after) == [("warning", 5)]
    assert r007(one_trip) == [("warning", 2)]


def test_r007_nvcc_confirming_the_f64_code_keeps_the_once_per_thread_hint() -> None:
    findings = [f for f in analyze_text(GRID_STRIDE) if f.rule == "R007"]
    facts = PtxFacts({2: LineCode(instructions=6, f64=4, functions={"keep_scaled"})})
    (confirmed,) = confirm_findings(findings, facts)
    assert confirmed.severity == "hint" and "nvcc shows: 4 f64 instructions" in confirmed.message
    # A hint that said nvcc may narrow the literal still becomes a warning when it does not.
    exact = "__global__ void k(float *y) { int i = threadIdx.x; y[i] = y[i] * 0.5; }"
    hedged = [f for f in analyze_text(exact) if f.rule == "R007"]
    (upgraded,) = confirm_findings(hedged, PtxFacts({1: LineCode(instructions=4, f64=2, functions={"k"})}))
    assert hedged[0].severity == "hint" and upgraded.severity == "warning"
