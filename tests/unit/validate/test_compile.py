"""Compilation (nvcc), diagnostics mapped to lines, ptxas reports, mangling, kernel lookup, cache,
occupancy against hand-computed cases, the contract check on candidate text."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from regrapht.spec.ctypes_ import parse_ctype
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import load_spec
from regrapht.validate.compiler import (
    CompileCache,
    Compiler,
    find_demangler,
    find_nvcc,
    parse_diagnostics,
    parse_ptxas_report,
    unresolved_externs,
)
from regrapht.validate.evaluator import CudaEvaluator
from regrapht.validate.mangle import find_entry, mangle, normalise_signature
from regrapht.validate.occupancy import occupancy
from regrapht.validate.signature import contract_violation
from regrapht.validate.types import Candidate

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")


def types(*texts: str) -> list:
    return [parse_ctype(t) for t in texts]


@pytest.mark.parametrize(("name", "params", "mangled"), [
    ("saxpy", ("int", "float", "float*", "float* __restrict__"), "_Z5saxpyifPfS_"),
    ("matmul", ("const float*", "const float*", "float*", "int"), "_Z6matmulPKfS0_Pfi"),
    ("transpose_tiled", ("float*", "const float*", "int", "int"), "_Z15transpose_tiledPfPKfii"),
    ("histogram", ("const unsigned char*", "unsigned int*", "int"), "_Z9histogramPKhPji"),
    ("f", ("float*", "const float*", "const float*", "float*", "int*", "const int*"), "_Z1fPfPKfS1_S_PiPKi"),
    ("g", ("size_t", "long long", "unsigned long long", "double*", "double*"), "_Z1gmxyPdS_"),
    ("h", (), "_Z1hv"),
])
def test_itanium_mangling(name: str, params: tuple[str, ...], mangled: str) -> None:
    assert mangle(name, types(*params)) == mangled


def test_lookup_by_demangled_signature_for_templates() -> None:
    entries = ["_Z5scaleIfLi4EEvPT_i", "plain"]

    def demangle(names):  # what c++filt prints
        return {"_Z5scaleIfLi4EEvPT_i": "void scale<float, 4>(float*, int)"}

    assert find_entry(entries, "scale<float, 4>", types("float*", "int"), demangle) == "_Z5scaleIfLi4EEvPT_i"
    assert find_entry(entries, "scale<float, 8>", types("float*", "int"), demangle) is None
    assert find_entry(entries, "plain", types("const float*"), None) == "plain"
    # CUDA's cu++filt: template parameters as T1, T2 ..., integer arguments with a cast
    cuda_names = {"_Z2swIfEvPKT_PS0_i": "void swish<float>(const T1 *, T1 *, int)",
                  "_Z2bmILi16EEvPKfPfi": "void bmm_fixed<(int)16>(const float *, float *, int)",
                  "_Z2mxIdLj8EEvPT_S0_j": "void mix<double, (unsigned int)8>(T1 *, T1 *, unsigned int)"}
    assert find_entry(list(cuda_names), "swish<float>", types("const float*", "float*", "int"),
                      lambda names: cuda_names) == "_Z2swIfEvPKT_PS0_i"
    assert find_entry(list(cuda_names), "bmm_fixed<16>", types("const float*", "float*", "int"),
                      lambda names: cuda_names) == "_Z2bmILi16EEvPKfPfi"
    assert find_entry(list(cuda_names), "mix<double, 8u>", types("double*", "double*", "unsigned int"),
                      lambda names: cuda_names) == "_Z2mxIdLj8EEvPT_S0_j"
    assert find_entry(list(cuda_names), "swish<double>", types("const float*", "float*", "int"),
                      lambda names: cuda_names) is None
    # a spec's `size_t` is what the demangler prints as `unsigned long` (the same type on the GPU's
    # LP64 ABI); once failed on the H200 for a template kernel with size_t parameters
    sized = {"_Z8rms_normIfEvPKT_S2_PS0_mmS0_":
             "void rms_norm<float>(const T1 *, const T1 *, T1 *, unsigned long, unsigned long, T1)"}
    assert find_entry(list(sized), "rms_norm<float>", types("const float*", "const float*", "float*", "size_t",
                                                            "size_t", "float"),
                      lambda names: sized) == "_Z8rms_normIfEvPKT_S2_PS0_mmS0_"
    assert find_entry(list(sized), "rms_norm<float>", types("const float*", "const float*", "float*", "long",
                                                            "size_t", "float"), lambda names: sized) is None
    assert normalise_signature("matmul(float const*, float const*, float*, int)") == (
        "matmul", None, tuple(types("const float*", "const float*", "float*", "int")))


@pytest.mark.parametrize(("threads", "regs", "smem", "dyn", "expected", "limit"), [
    (100, 16, 0, 0, 1.0, "warps"),  # 4 warps/block, 16 blocks
    (256, 64, 0, 0, 0.5, "registers"),  # 2048 regs/warp -> 8 warps per sub-partition -> 32 warps
    (256, 32, 0, 48 * 1024, 0.5, "shared memory"),  # 49 KB + 1 KB reserved -> 4 blocks of 228 KB
    (1024, 12, 4096, 0, 1.0, "warps"),
    (32, 16, 0, 0, 0.5, "blocks"),  # 32 blocks x 1 warp of 64
    (256, 255, 0, 0, 0.125, "registers"),  # 8192 regs/warp -> 2 per sub-partition -> 8 warps
    (128, 40, 0, 0, 0.75, "registers"),  # 1280 -> 12 per partition -> 48 warps -> 12 blocks of 4
])
def test_occupancy_sm90(threads: int, regs: int, smem: int, dyn: int, expected: float, limit: str) -> None:
    result = occupancy("sm_90", threads_per_block=threads, registers=regs, shared_static=smem, shared_dynamic=dyn)
    assert result is not None
    assert result.occupancy == pytest.approx(expected)
    assert result.limited_by == limit


def test_occupancy_other_archs_and_limits() -> None:
    sm86 = occupancy("sm_86", threads_per_block=256, registers=40)
    assert sm86 is not None and sm86.occupancy == 1.0 and sm86.blocks_per_sm == 6
    sm80 = occupancy("sm_80", threads_per_block=128, registers=32, shared_dynamic=100 * 1024)
    assert sm80 is not None and sm80.blocks_per_sm == 1
    too_big = occupancy("sm_90", threads_per_block=128, registers=32, shared_dynamic=228 * 1024)
    assert too_big is not None and too_big.blocks_per_sm == 0
    assert occupancy("sm_999", threads_per_block=128, registers=32) is None


PTXAS = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z15transpose_tiledPfPKfii' for 'sm_90'
ptxas info    : Function properties for _Z15transpose_tiledPfPKfii
    24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 4096 bytes smem, 384 bytes cmem[0]
ptxas info    : Compiling entry function 'plain' for 'sm_90'
ptxas info    : Function properties for plain
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
"""


def test_ptxas_report() -> None:
    report = parse_ptxas_report(PTXAS)
    tiled = report["_Z15transpose_tiledPfPKfii"]
    assert (tiled.registers, tiled.shared_static_bytes, tiled.stack_bytes) == (12, 4096, 24)
    assert (tiled.spill_bytes, tiled.barriers, tiled.constant_bytes) == (20, 1, 384)
    assert report["plain"].registers == 8


def test_diagnostics_are_mapped_to_the_users_file() -> None:
    log = ('kernel.cu(5): error: identifier "x" is undefined\n  x = 1;\n  ^\n\n'
           'kernel.cu(3): warning #177-D: variable "q" was declared but never referenced\n'
           'inc/helper.cuh(9): error: expected a ";"\n'
           'kernel.cu:2:10: fatal error: missing.h: No such file or directory\n'
           'ptxas error   : Entry function uses too much shared data\n')
    found = parse_diagnostics(log, source_name="kernel.cu", display_file="src/k.cu")
    assert [(d.file, d.line, d.severity) for d in found] == [
        ("src/k.cu", 5, "error"), ("src/k.cu", 3, "warning"), ("inc/helper.cuh", 9, "error"),
        ("src/k.cu", 2, "error"), ("src/k.cu", None, "error")]
    assert found[1].code == "177-D"


def test_contract_check_on_candidate_text() -> None:
    params = tuple(types("float*", "const float*", "int", "int"))
    source = (EXAMPLES / "transpose.cu").read_text()
    assert contract_violation(source, "transpose_tiled", params) is None
    restrict = source.replace("const float *in", "const float *__restrict__ in")
    assert contract_violation(restrict, "transpose_tiled", params) is None
    assert "renaming" in (contract_violation(source.replace("transpose_tiled(", "tt("), "transpose_tiled",
                                             params) or "")
    changed = source.replace("const float *in, int rows", "const double *in, int rows")
    assert "parameter 2" in (contract_violation(changed, "transpose_tiled", params) or "")


def test_an_unresolved_extern_is_explained_with_its_demangled_name() -> None:
    log = "ptxas fatal   : Unresolved extern function '_Z5twiceIfET_S0_'\n"
    found = unresolved_externs(log, "src/objective.cu", lambda names: {"_Z5twiceIfET_S0_": "float twice<float>(float)"})
    assert found is not None and found.file == "src/objective.cu" and found.severity == "error"
    assert "`float twice<float>(float)`" in found.message and "-rdc=true" in found.message
    assert "defined in another file" in found.message
    assert unresolved_externs("ptxas info    : Used 10 registers\n", "a.cu", None) is None
    assert "`_Z5twicef`" in str(unresolved_externs("Unresolved extern function '_Z5twicef'", "a.cu", None))


@pytest.fixture
def compiler(tmp_path: Path) -> Compiler:
    nvcc = find_nvcc(os.environ)
    if nvcc is None:
        pytest.skip("nvcc not found")
    return Compiler(nvcc, cache=CompileCache(tmp_path), demangler=find_demangler(nvcc, os.environ))


@pytest.mark.nvcc
@needs_nvcc
def test_compile_error_line_and_cache_hit(compiler: Compiler) -> None:
    bad = "__global__ void k(float *y)\n{\n    y[0] = undefined_value;\n}\n"
    result = compiler.compile(bad, file="src/bad.cu")
    assert not result.ok
    assert result.errors[0].file == "src/bad.cu" and result.errors[0].line == 3
    assert "undefined_value" in result.errors[0].message
    good = (EXAMPLES / "transpose.cu").read_text()
    first = compiler.compile(good, file="transpose.cu")
    second = compiler.compile(good, file="transpose.cu")
    assert first.ok and not first.cached and second.cached and second.cubin == first.cubin
    assert second.kernels["_Z15transpose_tiledPfPKfii"].shared_static_bytes == 4096


@pytest.mark.nvcc
@needs_nvcc
def test_a_device_function_defined_in_another_file_is_named_first(compiler: Compiler) -> None:
    # what a project built with -rdc=true has: a template declared here, defined in another file
    source = "template <typename T> __device__ T twice(T);\n__global__ void k(float *x) { x[0] = twice(x[0]); }\n"
    result = compiler.compile(source, file="src/uses_twice.cu")
    assert not result.ok
    first = result.first_error()
    assert first.startswith("src/uses_twice.cu: error: calls the device function `"), first
    assert "twice" in first and "device linking" in first


@pytest.mark.nvcc
@needs_nvcc
def test_evaluator_without_device_is_unverified(compiler: Compiler, tmp_path: Path) -> None:
    source = (EXAMPLES / "saxpy.cu").read_text()
    spec = load_spec(EXAMPLES / "saxpy.regrapht.toml")
    ev = CudaEvaluator(source, "saxpy", spec, arch="sm_90", worker=None, cache_dir=tmp_path, compiler=compiler)
    assert ev.gpu_name is None and ev.baseline() is None
    assert ev.resources().registers > 0 and ev.occupancy() is not None
    launch = LaunchConfig(("ceil_div(n, 256)",), ("256",))
    result = ev.evaluate(Candidate(source.replace("* 1.0", ""), launch))
    assert result.outcome == "unverified" and result.reason == "no CUDA device present"
    assert result.timing is None and result.speedup is None
    renamed = ev.evaluate(Candidate(source.replace("saxpy(int", "saxpy2(int"), launch))
    assert renamed.outcome == "rejected"
    params = ev.evaluate(Candidate(source.replace("float a, float *x", "double a, float *x"), launch))
    assert params.outcome == "rejected" and "parameter 2" in params.reason
    broken = ev.evaluate(Candidate(source.replace("y[i] =", "y[i] = zz +"), launch))
    assert broken.outcome == "compile_error" and "candidate.cu:9" in broken.reason
    bad_launch = ev.evaluate(Candidate(source, LaunchConfig(("n / 0",), ("256",))))
    assert bad_launch.outcome == "rejected" and "launch.grid[0]" in bad_launch.reason
    many = ev.evaluate_many([Candidate(source + f"\n// {i}\n", launch) for i in range(3)])
    assert [m.outcome for m in many] == ["unverified"] * 3
