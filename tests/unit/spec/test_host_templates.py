"""Kernels launched from template host functions (spec/host_templates.py): the host's template
arguments read from where the file instantiates it, so that the spec names a real instance,
and a launch whose template arguments nothing in the file binds is refused, not written with the
host's parameter names in it. The nvcc test compiles each file and finds the inferred instance
among the compiled entries, as a check does before it runs anything."""

from __future__ import annotations

import os
import shutil

import pytest

from regrapht.cuda.view import kernels_of
from regrapht.errors import InputError
from regrapht.spec.host_templates import argument_pointee, host_instances
from regrapht.spec.infer import infer_spec
from regrapht.spec.model import parse_spec
from regrapht.spec.proofs import spec_problems

CLAMP = """
#include <cuda_fp16.h>
template <class T>
static __global__ void op_clamp_kernel(const T * x, T * dst, const T lo, const T hi, const int k) {
    const int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= k) return;
    dst[i] = x[i] < lo ? lo : (x[i] > hi ? hi : x[i]);
}

template <class T>
static void clamp_cuda(const T * x, T * dst, const T lo, const T hi, const int k, cudaStream_t stream) {
    const int num_blocks = (k + 255) / 256;
    op_clamp_kernel<<<num_blocks, 256, 0, stream>>>(x, dst, lo, hi, k);
}

void clamp_any(const void * src0_d, void * dst_d, float lo, float hi, int n, bool f16, cudaStream_t stream) {
    if (f16) {
        clamp_cuda((const half *)src0_d, (half *)dst_d, (half)lo, (half)hi, n, stream);
    } else {
        clamp_cuda((const float *)src0_d, (float *)dst_d, (float)lo, (float)hi, n, stream);
    }
}
"""

REDUCE = """
typedef float label_t;

template <typename VAL_T, typename REDUCE_T>
__global__ void reduce_sum_kernel(const VAL_T* values, const int num_value, REDUCE_T* block_buffer) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < num_value) {
        atomicAdd(block_buffer, static_cast<REDUCE_T>(values[i]));
    }
}

template <typename VAL_T, typename REDUCE_T>
void reduce_sum(const VAL_T* values, int n, REDUCE_T* block_buffer) {
    reduce_sum_kernel<VAL_T, REDUCE_T><<<(n + 255) / 256, 256>>>(values, n, block_buffer);
}

template void reduce_sum<label_t, double>(const label_t* values, int n, double* block_buffer);
template void reduce_sum<double, double>(const double* values, int n, double* block_buffer);
"""

CONCAT = """
template <typename T, int dim>
__global__ void concat_cont(const T * x, T * dst, const int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = x[i] * (T)(dim + 1);
    }
}

template <typename T>
static void concat_cont_cuda(const T * x, T * dst, int n, int dim) {
    if (dim == 1) {
        concat_cont<T, 1><<<(n + 127) / 128, 128>>>(x, dst, n);
    } else {
        concat_cont<T, 2><<<(n + 127) / 128, 128>>>(x, dst, n);
    }
}

template <typename T>
static void concat_impl(const T * x, T * dst, int n) {
    concat_cont_cuda(x, dst, n, 1);
}

void concat_f32(const void * x, void * dst, int n) {
    const float * src = (const float *) x;
    float * out = (float *) dst;
    concat_impl(src, out, n);
}
"""

UNBOUND = """
template <typename T>
__global__ void fill_kernel(T * dst, const int n, const T value) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = value;
    }
}

template <typename T>
void fill_cuda(T * dst, int n, T value) {
    fill_kernel<<<(n + 255) / 256, 256>>>(dst, n, value);
}
"""


def test_casts_at_the_host_call_bind_its_template_parameter_and_a_describable_instance_is_taken() -> None:
    spec = infer_spec(CLAMP, "op_clamp_kernel")
    kernel = parse_spec(spec).kernels[0]
    # the first call passes half, which a spec cannot describe: the float instance the file also launches
    assert kernel.name == "op_clamp_kernel<float>"
    assert [a.ctype.spelled() for a in kernel.args] == ["const float*", "float*", "float", "float", "int"]
    assert "clamp_cuda's T = float from line" in spec and "the file also launches op_clamp_kernel<half>" in spec
    assert "name" not in kernel.guessed and spec_problems(kernel, CLAMP) == []


def test_an_explicit_instantiation_of_the_host_binds_it_and_typedefs_become_the_types_they_name() -> None:
    kernel = parse_spec(infer_spec(REDUCE, "reduce_sum_kernel")).kernels[0]
    assert kernel.name == "reduce_sum_kernel<float, double>"  # label_t as the compiler prints it
    assert [a.ctype.spelled() for a in kernel.args] == ["const float*", "int", "double*"]


def test_a_typedef_declared_as_two_types_takes_the_ifdef_arm_the_compile_takes_else_is_left_out() -> None:
    from regrapht.spec.infer_types import typedefs_of

    branches = REDUCE.replace("typedef float label_t;", "#ifdef LABEL_T_USE_DOUBLE\ntypedef double label_t;\n#else\n"
                              "typedef float label_t;\n#endif\ntypedef float score_t;\ntypedef float score_t;")
    assert "label_t" not in typedefs_of([branches]) and typedefs_of([branches])["score_t"] == "float"
    # without the compile's defines (None), label_t's instance cannot be described: the next one
    model = kernels_of(branches).model
    host = next(f for f in model.functions if f.name == "reduce_sum")
    assert [i.bindings for i in host_instances(host, branches, model.functions)][0] == (("VAL_T", "label_t"), ("REDUCE_T", "double"))
    # with the compile's defines, the #ifdef arm it takes decides
    assert typedefs_of([branches], defines=())["label_t"] == "float"
    assert typedefs_of([branches], defines=("LABEL_T_USE_DOUBLE",))["label_t"] == "double"
    assert parse_spec(infer_spec(branches, "reduce_sum_kernel", compile_defines=())).kernels[0].name == \
        "reduce_sum_kernel<float, double>"
    assert "label_t" not in typedefs_of([branches.replace("#ifdef LABEL_T_USE_DOUBLE", "#if LABEL_DOUBLE > 0")], ())


def test_a_template_caller_of_the_host_is_followed_up_to_a_concrete_call() -> None:
    model = kernels_of(CONCAT).model
    impl = next(f for f in model.functions if f.name == "concat_impl")
    assert [i.bindings for i in host_instances(impl, CONCAT, model.functions)] == [(("T", "float"),)]
    host = next(f for f in model.functions if f.name == "concat_cont_cuda")
    assert [i.bindings for i in host_instances(host, CONCAT, model.functions)] == [(("T", "float"),)]
    kernel = parse_spec(infer_spec(CONCAT, "concat_cont")).kernels[0]
    assert kernel.name == "concat_cont<float, 1>"
    assert [a.ctype.spelled() for a in kernel.args] == ["const float*", "float*", "int"]


def test_a_host_template_parameter_nothing_binds_is_refused_not_written_into_the_name() -> None:
    with pytest.raises(InputError, match="is a template and its arguments cannot be read from a launch") as caught:
        infer_spec(UNBOUND, "fill_kernel")
    assert caught.value.line == 3  # the kernel's name
    # a call elsewhere in the file binds it
    bound = UNBOUND + "void fill_ints(int * p, int n) { fill_cuda(p, n, 7); }\n"
    assert parse_spec(infer_spec(bound, "fill_kernel")).kernels[0].name == "fill_kernel<int>"


@pytest.mark.parametrize(("argument", "before", "pointee"), [
    ("(const float *) src", "", "float"),
    ("(half*)dst_d", "", "half"),
    ("static_cast<const double *>(p)", "", "double"),
    ("y", "void f(dst_t * y, int k)", "dst_t"),
    ("y", "const float * y = a; int * y2;", "float"),
    ("y + i3 * (nb / sizeof(T))", "float * y;", "float"),
    ("n + 1", "int n;", None),
    ("n", "int n;", None),
])
def test_argument_pointee(argument: str, before: str, pointee: str | None) -> None:
    assert argument_pointee(argument, before) == pointee


CONVERT = """
#include <cstdint>
#include <cuda_fp16.h>
template<typename T>
using to_t_cuda_t = void (*)(const void * x, T * y, int64_t k, cudaStream_t stream);
typedef to_t_cuda_t<float> to_fp32_cuda_t;
typedef to_t_cuda_t<half> to_fp16_cuda_t;

template<typename dst_t>
static __global__ void dequantize_block_q4(const void * __restrict__ vx, dst_t * __restrict__ yy, const int64_t k) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k) {
        yy[i] = (dst_t)(((const unsigned char *) vx)[i] & 15);
    }
}

template<typename dst_t>
static void dequantize_row_q4_cuda(const void * vx, dst_t * y, const int64_t k, cudaStream_t stream) {
    dequantize_block_q4<<<(k + 255) / 256, 256, 0, stream>>>(vx, y, k);
}

to_fp16_cuda_t get_to_fp16(int type) {
    switch (type) {
        case 2: return dequantize_row_q4_cuda;
        default: return nullptr;
    }
}

to_fp32_cuda_t get_to_fp32(int type) {
    switch (type) {
        case 2: return dequantize_row_q4_cuda;
        default: return nullptr;
    }
}
"""


def test_a_host_returned_as_a_function_pointer_takes_the_pointer_type_s_parameters() -> None:
    spec = infer_spec(CONVERT, "dequantize_block_q4")
    kernel = parse_spec(spec).kernels[0]
    assert kernel.name == "dequantize_block_q4<half>"  # the first the file writes (to_fp16)
    assert [a.ctype.spelled() for a in kernel.args] == ["const void*", "half*", "long"]
    assert "dequantize_row_q4_cuda's dst_t = half" in spec and "also launches dequantize_block_q4<float>" in spec



def test_integer_constants_and_functions_in_template_arguments_are_written_as_compiled() -> None:
    from regrapht.validate.mangle import _normal_targs

    source = """
#define WARP_SIZE 32
template <int block_size>
__global__ void norm_f32(const float * x, float * dst, const int n) {
    const int i = blockIdx.x * block_size + threadIdx.x;
    if (i < n) {
        dst[i] = x[i] * 2.0f;
    }
}
void run(const float * x, float * dst, int n) {
    norm_f32<WARP_SIZE * 2><<<(n + 63) / 64, WARP_SIZE * 2>>>(x, dst, n);
}
"""
    assert parse_spec(infer_spec(source, "norm_f32")).kernels[0].name == "norm_f32<64>"
    local = source.replace("norm_f32<WARP_SIZE * 2><<<", "constexpr int rows = 2;\n    norm_f32<WARP_SIZE * rows><<<")
    assert parse_spec(infer_spec(local, "norm_f32<WARP_SIZE * rows>")).kernels[0].name == "norm_f32<64>"
    # a bool constant defined in two branches: the one before the launch
    branches = """
template <bool need_check>
__global__ void q8(const float * x, float * y, const int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (!need_check || i < n) {
        y[i] = x[i];
    }
}
void run(const float * x, float * y, int n) {
    if (n % 256 == 0) {
        const bool need_check = false;
        q8<need_check><<<n / 256, 256>>>(x, y, n);
    } else {
        const bool need_check = true;
        q8<need_check><<<(n + 255) / 256, 256>>>(x, y, n);
    }
}
"""
    assert parse_spec(infer_spec(branches, "q8<need_check>")).kernels[0].name == "q8<false>"
    # cu++filt writes a function argument with its address: `dequantize_block<32, 2, &dequantize_q4_0, float>`
    assert _normal_targs("32, 2, &dequantize_q4_0, float") == _normal_targs("32,2,dequantize_q4_0,float")
    assert _normal_targs("a&b") == "a&b"

@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize(("source", "kernel"), [(CLAMP, "op_clamp_kernel"), (REDUCE, "reduce_sum_kernel"),
                                                (CONVERT, "dequantize_block_q4"), (CONCAT, "concat_cont")])
def test_the_inferred_instance_is_an_entry_of_the_compiled_file(tmp_path, source: str, kernel: str) -> None:
    from regrapht.validate.compiler import CompileCache, Compiler, find_demangler, find_nvcc
    from regrapht.validate.mangle import find_entry

    nvcc = find_nvcc(os.environ)
    assert nvcc is not None
    compiler = Compiler(nvcc, cache=CompileCache(tmp_path), demangler=find_demangler(nvcc, os.environ))
    compiled = compiler.compile(source, arch="sm_90", file="kernel.cu")
    assert compiled.ok, compiled.first_error()
    spec = parse_spec(infer_spec(source, kernel)).kernels[0]
    entry = find_entry(compiled.entries(), spec.name, [a.ctype for a in spec.args], compiler.demangle)
    assert entry is not None, (spec.name, compiled.entries())


def test_the_compile_s_defines_choose_the_instance() -> None:
    branches = REDUCE.replace("typedef float label_t;", "#ifdef LABEL_T_USE_DOUBLE\ntypedef double label_t;\n#else\n"
                              "typedef float label_t;\n#endif")
    doubled = parse_spec(infer_spec(branches, "reduce_sum_kernel", compile_defines=("LABEL_T_USE_DOUBLE=1",)))
    assert doubled.kernels[0].name == "reduce_sum_kernel<double, double>"


def test_an_include_guard_does_not_hide_the_header_s_typedefs() -> None:
    from regrapht.spec.infer_types import typedefs_of

    header = "#ifndef META_H_\n#define META_H_\n#ifdef SCORE_DOUBLE\ntypedef double score_t;\n#else\n" \
             "typedef float score_t;\n#endif\n#endif  // META_H_\n"
    assert typedefs_of([header], defines=())["score_t"] == "float"
    assert typedefs_of([header], defines=("SCORE_DOUBLE",))["score_t"] == "double"
