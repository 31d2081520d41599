"""Real nvcc: specs of real kernel shapes are found in the compiled original: CUDA vector types
(their Itanium names), typedefs, a template instance named as written (`reduce6<float, 256, true>`
against nvcc's `(unsigned int)256, (bool)1`), inferred specs that every run accepts, and a spec the
kernel's accesses prove wrong refused before anything runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from regrapht.errors import InputError
from regrapht.spec.infer import infer_spec
from regrapht.spec.model import parse_spec
from regrapht.validate.compiler import CompileCache, Compiler, find_demangler, find_nvcc
from regrapht.validate.evaluator import CudaEvaluator

pytestmark = pytest.mark.nvcc

SOURCE = r"""
typedef unsigned int uint;
__global__ void pack(const float4* __restrict__ in, uchar4* out, uint n) {
  uint i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float4 v = in[i]; out[i] = make_uchar4(v.x, v.y, v.z, v.w); }
}
template <typename T, unsigned int blockSize, bool nIsPow2>
__global__ void reduce6(const T* g_idata, T* g_odata, unsigned int n) {
  extern __shared__ T sdata[];
  unsigned int tid = threadIdx.x, i = blockIdx.x * blockSize * 2 + threadIdx.x;
  T sum = 0;
  while (i < n) { sum += g_idata[i]; if (nIsPow2 || i + blockSize < n) sum += g_idata[i + blockSize];
                  i += blockSize * 2 * gridDim.x; }
  sdata[tid] = sum;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) { if (tid < s) sdata[tid] += sdata[tid + s]; __syncthreads(); }
  if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
void run(const float4* in, uchar4* out, uint n, const float* x, float* partial) {
  pack<<<(n + 255) / 256, 256>>>(in, out, n);
  reduce6<float, 256, true><<<64, 256, 256 * sizeof(float)>>>(x, partial, n);
}
"""


@pytest.fixture
def compiler(tmp_path: Path) -> Compiler:
    nvcc = find_nvcc(os.environ)
    if nvcc is None:
        pytest.skip("nvcc not found")
    return Compiler(nvcc, cache=CompileCache(tmp_path), demangler=find_demangler(nvcc, os.environ))


@pytest.mark.parametrize("kernel", ["pack", "reduce6"])
def test_inferred_specs_are_found_in_the_compiled_original(compiler: Compiler, tmp_path: Path, kernel: str) -> None:
    spec = parse_spec(infer_spec(SOURCE, kernel, file="real.cu"))
    name = spec.kernels[0].name
    evaluator = CudaEvaluator(SOURCE, name, spec, arch="sm_90", worker=None, cache_dir=tmp_path, compiler=compiler,
                              file="real.cu")
    assert evaluator.resources().registers > 0
    if kernel == "reduce6":
        assert name == "reduce6<float, 256, true>" and spec.kernels[0].shared_bytes == "1024"
    else:
        assert [a.ctype.spelled() for a in spec.kernels[0].args] == ["const float4*", "uchar4*", "unsigned int"]


def test_a_spec_its_kernel_proves_wrong_is_refused_before_running(compiler: Compiler, tmp_path: Path) -> None:
    text = infer_spec(SOURCE, "pack", file="real.cu").replace('count = "n"', 'count = "n / 2"', 1)
    with pytest.raises(InputError, match="provably touches element"):
        CudaEvaluator(SOURCE, "pack", parse_spec(text), arch="sm_90", worker=None, cache_dir=tmp_path,
                      compiler=compiler, file="real.cu")
