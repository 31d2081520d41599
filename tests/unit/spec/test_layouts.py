"""Plain structs laid out for a spec (spec/layouts.py): sizes and alignments as the C ABI gives
them, checked against nvcc's own `sizeof`/`alignof` (the nvcc test compiles static_asserts of
every layout computed here), reasons for what is not plain data, and a struct passed by value
inferred as guessed zero bytes of that size whose kernel is found among the compiled entries."""

from __future__ import annotations

import os
import shutil

import pytest

from regrapht.spec.infer import infer_spec
from regrapht.spec.infer_types import typedefs_of
from regrapht.spec.layouts import Layout, integer_defines, struct_bodies, struct_layout
from regrapht.spec.model import parse_spec

STRUCTS = """
#include <cstdint>
#include <cuda_fp16.h>
#define QK4_0 32
#define QR4_0 (QK4_0 / 16)
typedef uint16_t ggml_half;
struct block_q4_0 { ggml_half d; uint8_t qs[QK4_0 / QR4_0 / 1]; };
struct rope_corr_dims {
    float v[2];
};
struct soft_max_params {
    int64_t nheads;
    uint32_t n_head_log2;
    int64_t ncols;
    float scale, max_bias;  // two fields
};
struct SplitFindTask {
  int inner_feature_index;
  bool reverse;
  bool skip_default_bin;
  uint32_t hist_offset;
  uint8_t mfb_offset;
  uint32_t num_bin;
  int rand_threshold;
};
class top_k_state {
 public:
  __device__ void reset() { rank = 0; if (prefix) { rank = 1; } }
  static const int kMax = 4;
  uint32_t prefix;
  int rank;
};
struct with_vectors { float3 a; char c; double4 d; half h; };
struct nested { block_q4_0 b[2]; short s; };
typedef struct {
    ggml_half d;
    uint8_t qs[QK4_0 / 2];
} block_q4_t;
struct with_ctor {
    __device__ with_ctor(int v) : n(v), m(v) { if (v) { n = 1; } }
    int n;
    int m;
};
"""

REFUSED = """
struct with_pointer { int n; const float * data; };
struct bits { int a : 3; int b; };
struct Base { int a; };
struct Derived : Base { int b; };
struct unknown_field { std::vector<int> v; };
union both { int i; float f; };
typedef struct {
    union {
        struct { short d; short m; };
        int dm;
    };
    unsigned char qs[16];
} block_q4_1;
"""

EXPECTED = {"block_q4_0": (18, 2), "rope_corr_dims": (8, 4), "soft_max_params": (32, 8), "SplitFindTask": (24, 4),
            "top_k_state": (8, 4), "with_vectors": (64, 16), "nested": (38, 2), "block_q4_t": (18, 2),
            "with_ctor": (8, 4)}


def _layout(text: str, name: str) -> Layout | str:
    return struct_layout(name, struct_bodies([text]), typedefs_of([text]), integer_defines([text]))


@pytest.mark.parametrize(("name", "expected"), sorted(EXPECTED.items()))
def test_plain_structs_are_laid_out_as_the_c_abi_does(name: str, expected: tuple[int, int]) -> None:
    assert _layout(STRUCTS, name) == Layout(*expected)


@pytest.mark.parametrize(("name", "reason"), [
    ("with_pointer", "is a pointer"), ("bits", "bit field"), ("Derived", "base class"),
    ("unknown_field", "not a plain declaration"), ("both", "union"), ("missing", "definition is not in the file"),
    ("block_q4_1", "nested struct or union"),
])
def test_what_is_not_plain_data_gives_the_reason(name: str, reason: str) -> None:
    found = _layout(REFUSED, name)
    assert isinstance(found, str) and reason in found


BY_VALUE = STRUCTS + """
template <bool forward>
__global__ void rope_norm(const float * x, float * dst, const int n, const rope_corr_dims corr_dims) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = forward ? x[i] * corr_dims.v[0] : x[i] * corr_dims.v[1];
    }
}

__global__ void with_params(const float * x, float * dst, const soft_max_params p, const int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = x[i] * p.scale;
    }
}

void run(const float * x, float * dst, int n, rope_corr_dims dims, soft_max_params p) {
    rope_norm<true><<<(n + 255) / 256, 256>>>(x, dst, n, dims);
    with_params<<<(n + 255) / 256, 256>>>(x, dst, p, n);
}
"""


def test_a_struct_by_value_is_guessed_zero_bytes_of_its_layout() -> None:
    spec = infer_spec(BY_VALUE, "rope_norm")
    kernel = parse_spec(spec).kernels[0]
    dims = kernel.args[3]
    assert (dims.ctype.base, dims.raw, dims.align) == ("rope_corr_dims", bytes(8), 4)
    assert "corr_dims.bytes" in kernel.guessed and "corr_dims = 8 zero bytes is a guess" in spec
    params = parse_spec(infer_spec(BY_VALUE, "with_params")).kernels[0].args[2]
    assert (params.raw, params.align) == (bytes(32), 8)


def test_a_struct_holding_a_pointer_is_refused_with_the_field() -> None:
    from regrapht.errors import InputError

    text = REFUSED + BY_VALUE.replace("const soft_max_params p", "const with_pointer p").replace(
        "soft_max_params p)", "with_pointer p)").replace(" * p.scale", " * p.n")
    with pytest.raises(InputError, match="cannot lay out .*`const float \\* data` is a pointer"):
        infer_spec(text, "with_params")


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_the_layouts_are_the_compiler_s(tmp_path) -> None:
    from regrapht.validate.compiler import CompileCache, Compiler, find_demangler, find_nvcc
    from regrapht.validate.mangle import find_entry

    nvcc = find_nvcc(os.environ)
    assert nvcc is not None
    compiler = Compiler(nvcc, cache=CompileCache(tmp_path), demangler=find_demangler(nvcc, os.environ))
    checks = "".join(f'static_assert(sizeof({n}) == {s} && alignof({n}) == {a}, "{n}");\n'
                     for n, (s, a) in EXPECTED.items())
    compiled = compiler.compile(BY_VALUE + checks, arch="sm_90", file="layouts.cu")
    assert compiled.ok, compiled.first_error()
    wrong = compiler.compile(BY_VALUE + 'static_assert(sizeof(block_q4_0) == 20, "x");\n', arch="sm_90",
                             file="wrong.cu")
    assert not wrong.ok  # the assertions can fail
    for kernel in ("rope_norm", "with_params"):
        spec = parse_spec(infer_spec(BY_VALUE, kernel)).kernels[0]
        assert find_entry(compiled.entries(), spec.name, [a.ctype for a in spec.args], compiler.demangle)


def test_integer_defines_skip_what_is_not_an_expression() -> None:
    from regrapht.spec.expr import names_in

    text = "#define EMPTY \\\n#define A 4\n#define B (A * 8) // bytes\n#define S \"x\"\n#define F(x) x\n#define C B/A\n"
    assert integer_defines([text]) == {"A": 4, "B": 32, "C": 8}
    assert names_in("") == set() and names_in("\\") == set()
