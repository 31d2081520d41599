"""The access-range proofs (cuda/ranges.py) and what they make of specs (spec/proofs.py, inference)."""

from __future__ import annotations

import pytest

from regrapht.cuda.ranges import Launch, access_ranges
from regrapht.errors import InputError
from regrapht.spec.ctypes_ import parse_ctype
from regrapht.spec.infer import infer_spec
from regrapht.spec.model import parse_spec
from regrapht.spec.proofs import spec_problems
from regrapht.spec.resolve import resolve
from regrapht.validate.mangle import _normal_targs, mangle

KERNELS = r"""
#define TILE 16
typedef unsigned int uint;
using Pixel = uchar4;
__device__ float fetch(const float* p, int i) { return p[i]; }
__device__ void store(float* p, int i, float v) { p[i] = v; }
__device__ int at(int r, int c, int w) { return r * w + c; }
__global__ void helpers(const float* in, float* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  store(out, at(y, x, w), 2.0f * fetch(in, y * w + x));
}
__global__ void cast_write(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 4) reinterpret_cast<float4*>(out)[i] = reinterpret_cast<const float4*>(in)[i];
}
__global__ void alias(const float* A, float* C, int M, int K) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= M) return;
  const float* row = A + r * K;
  float s = 0;
  for (int k = 0; k < K; ++k) s += row[k];
  C[r] = s;
}
__global__ void red(const float* in, float* out, int n) {
  extern __shared__ float s[];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned int st = blockDim.x / 2; st > 0; st >>= 1) { if (tid < st) s[tid] += s[tid + st]; __syncthreads(); }
  if (tid == 0) out[blockIdx.x] = s[0];
}
__global__ void stride(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  while (i < n) { y[i] = x[i]; i += blockDim.x * gridDim.x; }
}
__global__ void hist(const unsigned char* d, uint* bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[d[i]], 1u);
}
__global__ void escapes(float* p, int n) { opaque_call(p, n); }
__global__ void pix(Pixel* img, uint n) { uint i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) img[i].x = 0; }
__global__ void tex(cudaTextureObject_t t, float* o) { }
__global__ void defaults(float* o, int n, int* unused = NULL) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) o[i] = 1.0f; }
template <typename T, unsigned int blockSize, bool pow2>
__global__ void reduce6(const T* g_idata, T* g_odata, unsigned int n) {
  extern __shared__ T sdata[];
  unsigned int tid = threadIdx.x, i = blockIdx.x * blockSize * 2 + threadIdx.x;
  T sum = 0;
  while (i < n) { sum += g_idata[i]; if (pow2 || i + blockSize < n) sum += g_idata[i + blockSize]; i += blockSize * 2 * gridDim.x; }
  sdata[tid] = sum;
  __syncthreads();
  if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}
void host(float* d_in, float* d_out, int n, int w, int h) {
  reduce6<float, 256, false><<<64, 256, 256 * sizeof(float)>>>(d_in, d_out, n);
  dim3 b(16, 16); dim3 g((w + 15) / 16, (h + 15) / 16);
  helpers<<<g, b>>>(d_in, d_out, w, h);
}
"""


def ranges(kernel: str, grid: tuple[int, int, int], block: tuple[int, int, int], scalars: dict[str, int],
           elements: dict[str, tuple[str, int]] | None = None):  # type: ignore[no-untyped-def]
    result = access_ranges(KERNELS, kernel, Launch(grid, block, scalars, elements=elements or {}))
    assert result is not None
    return result


def test_helpers_are_followed_for_roles_and_bounds() -> None:
    found = ranges("helpers", (4, 8, 1), (16, 16, 1), {"w": 64, "h": 128}, {"in": ("float", 4), "out": ("float", 4)})
    assert found.buffers["in"].reads and not found.buffers["in"].writes and found.buffers["in"].complete
    assert found.buffers["out"].writes and not found.buffers["out"].reads
    assert found.buffers["in"].highest == 64 * 128 - 1 == found.buffers["in"].touched
    assert found.buffers["out"].highest == 64 * 128 - 1 == found.buffers["out"].touched


def test_casts_count_bytes_of_the_buffer() -> None:
    found = ranges("cast_write", (16, 1, 1), (256, 1, 1), {"n": 4096}, {"in": ("float", 4), "out": ("float", 4)})
    assert found.buffers["out"].writes and found.buffers["out"].highest == 4095
    assert found.buffers["in"].reads and found.buffers["in"].highest == 4095


def test_aliases_and_loops() -> None:
    found = ranges("alias", (4, 1, 1), (32, 1, 1), {"M": 100, "K": 7}, {"A": ("float", 4), "C": ("float", 4)})
    assert found.buffers["A"].highest == 100 * 7 - 1 == found.buffers["A"].touched
    assert found.buffers["C"].highest == 99


def test_extern_shared_use_and_grid_stride_while() -> None:
    found = ranges("red", (8, 1, 1), (128, 1, 1), {"n": 1000})
    assert found.shared is not None and found.shared.touched == 128 * 4 - 1
    assert found.buffers["out"].highest == 7
    strided = ranges("stride", (8, 1, 1), (128, 1, 1), {"n": 5000})
    assert strided.buffers["y"].highest == 4999 and strided.buffers["y"].lowest == 0


def test_narrow_loads_bound_data_dependent_indices() -> None:
    found = ranges("hist", (4, 1, 1), (256, 1, 1), {"n": 1024}, {"d": ("unsigned char", 1), "bins": ("unsigned int", 4)})
    assert found.buffers["bins"].highest == 255 and found.buffers["bins"].atomic_only


def test_an_escaping_pointer_is_not_proven() -> None:
    found = ranges("escapes", (1, 1, 1), (32, 1, 1), {"n": 4})
    assert not found.buffers["p"].complete and "opaque_call" in found.buffers["p"].reasons[0]


def _spec(body: str) -> str:
    return body


def test_spec_problems_name_their_keys() -> None:
    spec = parse_spec("""[[kernel]]
name = "helpers"
grid = ["ceil_div(w, 16)", "ceil_div(h, 16)"]
block = [16, 16]
[[kernel.arg]]
name = "in"
type = "const float*"
count = "w"
init = "uniform(-1, 1)"
[[kernel.arg]]
name = "out"
type = "float*"
count = "w * h"
role = "in"
init = "zeros"
[[kernel.arg]]
name = "w"
type = "int"
value = "64"
[[kernel.arg]]
name = "h"
type = "int"
value = "128"
""").kernels[0]
    problems = {p.key: p.message for p in spec_problems(spec, KERNELS)}
    assert "provably touches element 8191" in problems["kernel[0].arg[0].count"]
    assert "writes out" in problems["kernel[0].arg[1].role"]
    never_written = parse_spec("""[[kernel]]
name = "red"
grid = [8]
block = [128]
shared_bytes = "64"
[[kernel.arg]]
name = "in"
type = "float*"
count = "n"
role = "out"
[[kernel.arg]]
name = "out"
type = "float*"
count = "8"
role = "out"
[[kernel.arg]]
name = "n"
type = "int"
value = "1000"
""").kernels[0]
    problems = {p.key: p.message for p in spec_problems(never_written, KERNELS)}
    assert "never writes in" in problems["kernel[0].arg[0].role"]
    assert "byte 511" in problems["kernel[0].shared_bytes"]
    huge = parse_spec(never_written.file or "" + """[[kernel]]
name = "red"
grid = [8]
block = [128]
shared_bytes = "512"
[[kernel.arg]]
name = "in"
type = "const float*"
count = "1 << 60"
init = "zeros"
[[kernel.arg]]
name = "out"
type = "float*"
count = "8"
role = "out"
[[kernel.arg]]
name = "n"
type = "int"
value = "1000"
""").kernels[0]
    assert any("more than the" in p.message for p in spec_problems(huge, KERNELS))


def test_inference_proves_or_marks() -> None:
    reduce = parse_spec(infer_spec(KERNELS, "reduce6")).kernels[0]
    assert reduce.name == "reduce6<float, 256, false>"
    assert reduce.shared_bytes == "1024" and reduce.guessed == ()
    assert {a.name: a.role for a in reduce.args if a.is_pointer} == {"g_idata": "in", "g_odata": "out"}
    helpers = parse_spec(infer_spec(KERNELS, "helpers")).kernels[0]
    assert {a.name: (a.role, a.count) for a in helpers.args if a.is_pointer} == \
        {"in": ("in", "w * h"), "out": ("out", "w * h")}
    assert helpers.guessed == ()
    escapes = parse_spec(infer_spec(KERNELS, "escapes")).kernels[0]
    assert {"p.count", "p.role", "grid", "block"} <= set(escapes.guessed)
    assert escapes.args[0].role == "inout"
    defaults = parse_spec(infer_spec(KERNELS, "defaults")).kernels[0]
    assert [a.ctype.spelled() for a in defaults.args] == ["float*", "int", "int*"]
    pix = parse_spec(infer_spec(KERNELS, "pix")).kernels[0]
    assert pix.args[0].ctype.vector == "uchar4" and pix.args[1].ctype.base == "unsigned int"
    assert resolve(pix).buffers[0].count == 4 * resolve(pix).scalars["n"]
    for spec in (reduce, helpers, escapes, defaults, pix):
        assert spec_problems(spec, KERNELS) == []


def test_refusals_are_clear() -> None:
    with pytest.raises(InputError, match="texture or surface object"):
        infer_spec(KERNELS, "tex")
    template_only = KERNELS.replace("reduce6<float, 256, false><<<", "reduce6<<<")
    with pytest.raises(InputError, match="reduce6<float, 256, true>; reduce6<float, 512, false>"):
        infer_spec(template_only, "reduce6", instances=[
            "void reduce6<float, 512u, false>(const float*, float*, unsigned int)",
            "void reduce6<float, (unsigned int)256, (bool)1>(const float*, float*, unsigned int)"])
    only = infer_spec(template_only, "reduce6", instances=["void reduce6<float, 256u, true>(float const*, float*, unsigned int)"])
    assert 'name = "reduce6<float, 256, true>"' in only


def test_vector_types_and_template_normalisation() -> None:
    assert mangle("f", [parse_ctype(t) for t in ("float4*", "const float4*", "float4*", "const float*",
                                                  "const float*", "float*", "uchar4*", "int")]) \
        == "_Z1fP6float4PKS_S0_PKfS4_PfP6uchar4i"  # as nvcc 13 names it
    assert parse_ctype("Pixel*", aliases={"Pixel": "uchar4"}).vector == "uchar4"
    with pytest.raises(InputError, match="by value"):
        parse_ctype("float4")
    assert _normal_targs("float, 256, true") == _normal_targs("float, (unsigned int)256, (bool)1")
