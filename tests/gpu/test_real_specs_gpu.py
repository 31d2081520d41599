"""GPU: inferred specs of real kernel shapes run and compare: a CUDA vector-type kernel (buffers
made and compared lane by lane), a templated reduction with extern __shared__ whose shared bytes
come from the proofs, and a void* byte buffer; a wrong candidate of each is caught."""

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
__global__ void pack(const float4* __restrict__ in, float4* out, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float4 v = in[i]; out[i] = make_float4(v.w, v.z, v.y, 2.0f * v.x); }
}
template <typename T, unsigned int blockSize>
__global__ void reduce(const T* g_idata, T* g_odata, unsigned int n) {
  extern __shared__ T sdata[];
  unsigned int tid = threadIdx.x, i = blockIdx.x * blockSize + threadIdx.x;
  sdata[tid] = i < n ? g_idata[i] : T(0);
  __syncthreads();
  for (unsigned int s = blockSize / 2; s > 0; s >>= 1) { if (tid < s) sdata[tid] += sdata[tid + s]; __syncthreads(); }
  if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
__global__ void flip(const void* src, void* dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) ((unsigned char*)dst)[i] = 255 - ((const unsigned char*)src)[i];
}
void run(const float4* in, float4* out, unsigned int n, const float* x, float* p, const void* s, void* d) {
  pack<<<(n + 255) / 256, 256>>>(in, out, n);
  reduce<float, 256><<<(n + 255) / 256, 256, 256 * sizeof(float)>>>(x, p, n);
  flip<<<(n + 127) / 128, 128>>>(s, d, n);
}
"""
WRONG = {"pack": ("2.0f * v.x", "2.0f * v.y"), "reduce": ("sdata[tid + s]", "sdata[tid]"),
         "flip": ("255 -", "254 -")}


@pytest.mark.parametrize("kernel", ["pack", "reduce", "flip"])
def test_inferred_specs_run_and_catch_a_wrong_candidate(gpu_worker: GpuWorker, compiler: Compiler, cache_dir: Path,
                                                         kernel: str) -> None:
    spec = parse_spec(infer_spec(SOURCE, kernel, file="real.cu"))
    assert spec.kernels[0].guessed == ()
    name = spec.kernels[0].name
    evaluator = CudaEvaluator(SOURCE, name, spec, arch=None, worker=gpu_worker, cache_dir=cache_dir,
                              compiler=compiler, file="real.cu")
    launch = spec_launch(spec.kernels[0])
    assert evaluator.evaluate(Candidate(SOURCE, launch)).verified
    wrong = evaluator.evaluate(Candidate(SOURCE.replace(*WRONG[kernel], 1), launch))
    assert not wrong.verified and wrong.outcome == "wrong", wrong
