"""GPU: the spec kinds of issue 30's real kernels, inferred, run and compared on the device: a
buffer of plain structs (`const struct Task*`, made as bytes), a template kernel taking a CUDA
vector and a project struct by value (their bytes packed into the parameter buffer), and half
buffers of an instance read through a template host returned as a function pointer; a wrong
candidate of each is caught. (Written with the CPU tests of these kinds; needs the GPU host.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from regrapht.spec.infer import infer_spec
from regrapht.spec.model import parse_spec
from regrapht.spec.resolve import spec_launch
from regrapht.validate.compiler import Compiler
from regrapht.validate.evaluator import CudaEvaluator
from regrapht.validate.types import Candidate
from regrapht.validate.worker import GpuWorker

pytestmark = pytest.mark.gpu

SOURCE = r"""
#include <cstdint>
#include <cuda_fp16.h>
struct Task { int index; bool reverse; uint32_t offset; };
struct Params { float scale; int shift; };

__global__ void tasks_kernel(const Task * tasks, float * out, const int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = (float)(tasks[i].offset + tasks[i].index) + 0.5f;
    }
}

template <int K>
__global__ void by_value(const float * x, float * y, const uint3 d, const Params p, const int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = x[i] * (p.scale + 1.0f) + (float)(d.x + p.shift + K);
    }
}

template <typename T>
using to_t = void (*)(const void * x, T * y, int64_t k, cudaStream_t stream);

template <typename dst_t>
static __global__ void dequantize(const void * __restrict__ vx, dst_t * __restrict__ yy, const int64_t k) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k) {
        yy[i] = (dst_t)(float)(((const unsigned char *) vx)[i] & 15);
    }
}

template <typename dst_t>
static void dequantize_cuda(const void * vx, dst_t * y, const int64_t k, cudaStream_t stream) {
    dequantize<<<(k + 255) / 256, 256, 0, stream>>>(vx, y, k);
}

to_t<half> get_to_fp16() { return dequantize_cuda; }

void run(const Task * t, float * out, int n, const float * x, float * y, uint3 d, Params p) {
    tasks_kernel<<<(n + 255) / 256, 256>>>(t, out, n);
    by_value<3><<<(n + 255) / 256, 256>>>(x, y, d, p, n);
}
"""
WRONG = {"tasks_kernel": ("+ 0.5f", "+ 0.25f"), "by_value": ("+ K)", "+ K + 1)"), "dequantize": ("& 15", "& 7")}
KINDS = {"tasks_kernel": "tasks.init", "by_value": "d.bytes", "dequantize": None}


@pytest.mark.parametrize("kernel", sorted(WRONG))
def test_the_new_spec_kinds_run_and_catch_a_wrong_candidate(gpu_worker: GpuWorker, compiler: Compiler,
                                                             cache_dir: Path, kernel: str) -> None:
    spec = parse_spec(infer_spec(SOURCE, kernel, file="kinds.cu"))
    inferred = spec.kernels[0]
    if KINDS[kernel] is not None:
        assert KINDS[kernel] in inferred.guessed  # the bytes or contents chosen are marked
    if kernel == "dequantize":
        assert inferred.name == "dequantize<half>" and inferred.args[1].ctype.info.dtype == "float16"
    evaluator = CudaEvaluator(SOURCE, inferred.name, spec, arch=None, worker=gpu_worker, cache_dir=cache_dir,
                              compiler=compiler, file="kinds.cu")
    launch = spec_launch(inferred)
    assert evaluator.evaluate(Candidate(SOURCE, launch)).verified
    wrong = evaluator.evaluate(Candidate(SOURCE.replace(*WRONG[kernel], 1), launch))
    assert not wrong.verified and wrong.outcome == "wrong", wrong
