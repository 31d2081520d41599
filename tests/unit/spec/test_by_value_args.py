"""CUDA vectors and enumerations passed by value (`const uint3 ne02`, `const enum ggml_op_pool
op`): spec inference writes them as a struct's bytes (docs/kernel-spec.md, `struct NAME`) with
the size and alignment vector_types.h (or the enumeration's underlying type) gives, the bytes
zeros and listed in `guessed`; the compiled kernel is found by its name with them (the nvcc test
compiles the file and looks the inferred signature up among its entries, templates included)."""

from __future__ import annotations

import os
import shutil

import pytest

from regrapht.spec.ctypes_ import vector_layout
from regrapht.spec.infer import infer_spec
from regrapht.spec.infer_types import by_value_type, typedefs
from regrapht.spec.model import parse_spec
from regrapht.spec.resolve import resolve
from regrapht.validate.gpu_worker import packed_parameters
from regrapht.validate.mangle import mangle, normalise_signature

FASTDIV = """
#include <cstdint>
enum pool_op { POOL_MAX, POOL_AVG };
enum class Missing : uint8_t { None, Zero, NaN };

template <int n_template>
__global__ void tri_fast(const float * A, float * X, const uint3 ne02, const int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        X[i] = A[i] * (float)(ne02.z + n_template);
    }
}

__global__ void pool(const float * src, float * dst, const enum pool_op op, const Missing missing, const int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = op == POOL_MAX ? src[i] : (missing == Missing::Zero ? 0.0f : src[i] * 0.5f);
    }
}

void run(const float * A, float * X, uint3 d, int n, pool_op op, Missing m) {
    tri_fast<4><<<(n + 255) / 256, 256>>>(A, X, d, n);
    pool<<<(n + 255) / 256, 256>>>(A, X, op, m, n);
}
"""


@pytest.mark.parametrize(("name", "layout"), [
    ("uint3", (12, 4)), ("float4", (16, 16)), ("char3", (3, 1)), ("short4", (8, 8)), ("int2", (8, 8)),
    ("double4", (32, 16)), ("double1", (8, 8)), ("uchar2", (2, 2)), ("longlong3", (24, 8)),
])
def test_vector_layouts_follow_vector_types_h(name: str, layout: tuple[int, int]) -> None:
    assert vector_layout(name) == layout


def test_by_value_types() -> None:
    aliases = typedefs(FASTDIV, None)
    assert aliases["pool_op"] == "enum int" and aliases["Missing"] == "enum uint8_t"
    assert by_value_type("const uint3", aliases) == by_value_type("uint3", {})
    assert by_value_type("const enum pool_op", aliases).struct_size == 4  # type: ignore[union-attr]
    assert by_value_type("const Missing", aliases).struct_size == 1  # type: ignore[union-attr]
    assert by_value_type("const uint3*", aliases) is None and by_value_type("int", aliases) is None
    assert by_value_type("Params", aliases) is None  # a project struct: laid out by layouts.py


def test_a_vector_by_value_is_guessed_bytes_of_its_size_and_the_kernel_is_found_by_its_mangled_name() -> None:
    spec = infer_spec(FASTDIV, "tri_fast")
    kernel = parse_spec(spec).kernels[0]
    assert kernel.name == "tri_fast<4>"
    ne02 = kernel.args[2]
    assert ne02.is_struct and ne02.raw == bytes(12) and ne02.align == 4 and ne02.ctype.base == "uint3"
    assert "ne02.bytes" in kernel.guessed and "ne02 = 12 zero bytes is a guess" in spec
    # the parameter buffer as the worker packs it: A (8), X (8), ne02 (12, at 16), n (4, at 28)
    wire = resolve(kernel).to_wire()
    values = [__import__("numpy").uintp(0), __import__("numpy").uintp(0), None, __import__("numpy").int32(7)]
    assert len(packed_parameters(wire, values).tobytes()) == 32
    # cu++filt prints the template's signature with the vector by name
    assert normalise_signature("void tri_fast<(int)4>(const float *, float *, uint3, int)")[2][2].base == "uint3"  # type: ignore[index]


def test_enumerations_by_value_take_their_underlying_type_size() -> None:
    kernel = parse_spec(infer_spec(FASTDIV, "pool")).kernels[0]
    op, missing = kernel.args[2], kernel.args[3]
    assert (op.ctype.base, op.raw, op.align) == ("pool_op", bytes(4), 4)
    assert (missing.ctype.base, missing.raw, missing.align) == ("Missing", bytes(1), 1)
    assert {"op.bytes", "missing.bytes"} <= set(kernel.guessed)
    assert mangle("pool", [a.ctype for a in kernel.args]) == "_Z4poolPKfPf7pool_op7Missingi"


def test_a_guessed_bytes_key_is_a_key_of_the_kernel() -> None:
    spec = parse_spec(infer_spec(FASTDIV, "pool"))
    assert "missing.bytes" in spec.kernels[0].guessed


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("kernel", ["tri_fast", "pool"])
def test_the_inferred_signature_is_an_entry_of_the_compiled_file(tmp_path, kernel: str) -> None:
    from regrapht.validate.compiler import CompileCache, Compiler, find_demangler, find_nvcc
    from regrapht.validate.mangle import find_entry

    nvcc = find_nvcc(os.environ)
    assert nvcc is not None
    compiler = Compiler(nvcc, cache=CompileCache(tmp_path), demangler=find_demangler(nvcc, os.environ))
    compiled = compiler.compile(FASTDIV, arch="sm_90", file="kernel.cu")
    assert compiled.ok, compiled.first_error()
    spec = parse_spec(infer_spec(FASTDIV, kernel)).kernels[0]
    entry = find_entry(compiled.entries(), spec.name, [a.ctype for a in spec.args], compiler.demangle)
    assert entry is not None, (spec.name, compiled.entries())


def test_half_buffers_parse_and_mangle_and_a_half_by_value_is_refused() -> None:
    from regrapht.errors import InputError
    from regrapht.spec.ctypes_ import parse_ctype

    x, y = parse_ctype("const half*"), parse_ctype("__half*")
    assert (x.base, x.info.dtype, x.const, y.base) == ("half", "float16", True, "half")
    assert mangle("k", [x, y, parse_ctype("int")]) == "_Z1kPK6__halfPS_i"  # as nvcc 13 names it
    with pytest.raises(InputError, match="half passed by value is not supported"):
        parse_ctype("const half")
