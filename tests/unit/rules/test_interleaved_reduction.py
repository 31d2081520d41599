"""R010 on the interleaved reduction (issue 27) in the spellings the textbook and its readers use:
`tid % (2 * s) == 0`, the mask of the low bits `(tid & (2 * s - 1)) == 0`, and a device function
that gets the thread's rank as a `tid` parameter. A mask that is not `m - 1` (a bit test) is not
a modulus, and a sequential-addressing reduction (`if (tid < s)`) is silent. Kernels written for
these tests."""

from __future__ import annotations

import pytest

from regrapht.rules import analyze_text

KERNEL = """__global__ void block_sums(const float *in, float *out) {
    extern __shared__ float part[];
    unsigned int tid = threadIdx.x;
    part[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (CONDITION) {
            part[tid] += part[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = part[0];
}"""


def r010(text: str) -> list[tuple[str, int, str]]:
    return [(f.severity, f.span.start.line + 1, f.message) for f in analyze_text(text) if f.rule == "R010"]


@pytest.mark.parametrize("condition", ["tid % (2 * s) == 0", "(tid & (2 * s - 1)) == 0", "!(threadIdx.x & (2*s - 1))"])
def test_r010_interleaved_reduction_spellings(condition: str) -> None:
    (finding,) = r010(KERNEL.replace("CONDITION", condition))
    assert finding[:2] == ("warning", 7) and "interleaved addressing" in finding[2]


@pytest.mark.parametrize("condition", ["tid < blockDim.x / (2 * s)", "(tid & s) == 0 && tid + s < blockDim.x"])
def test_r010_sequential_addressing_and_bit_tests_are_not_the_interleaved_reduction(condition: str) -> None:
    assert [f for f in r010(KERNEL.replace("CONDITION", condition)) if "interleaved" in f[2]] == []


def test_r010_a_device_function_given_the_thread_rank() -> None:
    text = """__device__ void sum_in_place(float *part, unsigned int tid, unsigned int n) {
    for (unsigned int s = 1; s < n; s <<= 1) {
        if (tid % (2 * s) == 0 && tid + s < n) part[tid] += part[tid + s];
        __syncthreads();
    }
}
__device__ void scale_in_place(float *part, unsigned int count, unsigned int n) {
    for (unsigned int s = 1; s < n; s <<= 1) {
        if (count % (2 * s) == 0) part[s] *= 2.0f;
        __syncthreads();
    }
}"""
    assert [f[:2] for f in r010(text)] == [("warning", 3)]


def test_r010_a_run_time_mask_says_masked_by() -> None:
    text = """__global__ void pairs(float *a, unsigned int width) {
    unsigned int t = threadIdx.x;
    if (t & (width - 1)) {
        a[t] = a[t] * 2.0f;
        a[t + 1] = 0.0f;
    } else {
        a[t] = 1.0f;
        a[t + 1] = a[t];
    }
}"""
    ((severity, line, message),) = r010(text)
    assert (severity, line) == ("warning", 3) and "(masked by `width - 1`)" in message
