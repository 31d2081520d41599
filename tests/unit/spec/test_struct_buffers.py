"""Buffers of plain structs (`type = "const struct SplitFindTask*"`, `element_bytes`: the spec
extension, docs/kernel-spec.md): parsing with errors by key, buffers of `count * element_bytes`
bytes compared exactly, the mangled name, inference (the layout from the struct's definition,
`init` zeros listed in `guessed`), and with nvcc: the layout is the compiler's and the kernel,
also one in a namespace taking a namespaced struct, is found among the compiled entries."""

from __future__ import annotations

import os
import shutil

import pytest

from regrapht.errors import InputError
from regrapht.spec.infer import infer_spec
from regrapht.spec.model import parse_spec
from regrapht.spec.proofs import spec_problems
from regrapht.spec.resolve import resolve
from regrapht.validate.mangle import mangle, normalise_signature

SOURCE = """
#include <cstdint>
struct SplitFindTask {
  int inner_feature_index;
  bool reverse;
  bool skip_default_bin;
  uint32_t hist_offset;
  uint8_t mfb_offset;
  uint32_t num_bin;
  int rand_threshold;
};

struct top_k_radix_state {
    uint32_t prefix;
    uint32_t prefix_mask;
    int rank;
    int greater_count;
    int equal_count;
};

__global__ void find_best(const SplitFindTask * tasks, float * gains, const int num_tasks) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < num_tasks) {
        gains[i] = tasks[i].num_bin * 0.5f + tasks[i].hist_offset;
    }
}

static __global__ void top_k_radix_init(top_k_radix_state * states, int nrows, int k) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < nrows) {
        states[row] = {0, 0, k, 0, 0};
    }
}

namespace lgbm {
struct Leaf { int index; double sum; };
__global__ void leaf_sums(const Leaf * leaves, double * out, const int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = leaves[i].sum;
    }
}
void run_leaves(const Leaf * leaves, double * out, int n) {
    leaf_sums<<<(n + 255) / 256, 256>>>(leaves, out, n);
}
}  // namespace lgbm

void run(float * gains, top_k_radix_state * states, int n, int nrows, int k) {
    SplitFindTask * tasks;
    cudaMalloc(&tasks, n * sizeof(SplitFindTask));
    find_best<<<(n + 255) / 256, 256>>>(tasks, gains, n);
    top_k_radix_init<<<(nrows + 127) / 128, 128>>>(states, nrows, k);
}
"""

SPEC = """[[kernel]]
name = "find_best"
grid = ["(n + 255) / 256"]
block = [256]

[[kernel.arg]]
name = "tasks"
type = "const struct SplitFindTask*"
element_bytes = 24
count = "n"
init = "zeros"

[[kernel.arg]]
name = "gains"
type = "float*"
count = "n"
role = "out"

[[kernel.arg]]
name = "n"
type = "int"
value = "1000"
"""


def test_a_struct_buffer_reads_resolves_and_mangles() -> None:
    kernel = parse_spec(SPEC).kernel("find_best")
    tasks = kernel.args[0]
    assert tasks.is_pointer and not tasks.is_struct and tasks.ctype.is_struct_pointer
    assert tasks.ctype.spelled() == "const struct SplitFindTask*"
    buffer = resolve(kernel).buffers[0]
    assert (buffer.dtype, buffer.count) == ("uint8", 24 * 1000)  # bytes, compared exactly
    assert mangle("find_best", [a.ctype for a in kernel.args]) == "_Z9find_bestPK13SplitFindTaskPfi"
    # the demangler qualifies the class; it is matched by its own name
    parsed = normalise_signature("lgbm::leaf_sums(lgbm::Leaf const*, double*, int)")
    assert parsed is not None and parsed[2][0].is_struct_pointer and parsed[2][0].const


@pytest.mark.parametrize(("change", "key", "message"), [
    (("element_bytes = 24\n", ""), "kernel[0].arg[0].element_bytes", "needs 'element_bytes'"),
    (("element_bytes = 24", "element_bytes = 0"), "kernel[0].arg[0].element_bytes", "needs 'element_bytes'"),
    (("role = \"out\"", "role = \"out\"\nelement_bytes = 4"), "kernel[0].arg[1].element_bytes", "buffer of structs"),
])
def test_bad_struct_buffers_name_the_key(change: tuple[str, str], key: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_spec(SPEC.replace(*change))
    assert caught.value.key == key and message in str(caught.value)


def test_inference_lays_the_struct_out_and_marks_its_contents_a_guess() -> None:
    spec = infer_spec(SOURCE, "find_best")
    kernel = parse_spec(spec).kernels[0]
    tasks = kernel.args[0]
    assert (tasks.ctype.spelled(), tasks.ctype.struct_size, tasks.count, tasks.role) == \
        ("const struct SplitFindTask*", 24, "num_tasks", "in")
    assert tasks.init is not None and tasks.init.kind == "zeros" and "tasks.init" in kernel.guessed
    assert "tasks.count" not in kernel.guessed  # the proofs bound tasks[i] by i < num_tasks
    assert spec_problems(kernel, SOURCE) == []
    init = parse_spec(infer_spec(SOURCE, "top_k_radix_init")).kernels[0]
    states = init.args[0]
    assert (states.ctype.struct_size, states.role, states.init) == (20, "out", None)
    assert "states.init" not in init.guessed  # an output: nothing to fill


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_the_struct_buffer_kernels_are_entries_of_the_compiled_file(tmp_path) -> None:
    from regrapht.validate.compiler import CompileCache, Compiler, find_demangler, find_nvcc
    from regrapht.validate.mangle import find_entry

    nvcc = find_nvcc(os.environ)
    assert nvcc is not None
    compiler = Compiler(nvcc, cache=CompileCache(tmp_path), demangler=find_demangler(nvcc, os.environ))
    checks = ('static_assert(sizeof(SplitFindTask) == 24, "");\nstatic_assert(sizeof(top_k_radix_state) == 20, "");\n'
              'static_assert(sizeof(lgbm::Leaf) == 16, "");\n')
    compiled = compiler.compile(SOURCE + checks, arch="sm_90", file="structs.cu")
    assert compiled.ok, compiled.first_error()
    for name in ("find_best", "top_k_radix_init", "leaf_sums"):
        spec = parse_spec(infer_spec(SOURCE, name)).kernels[0]
        assert find_entry(compiled.entries(), spec.name, [a.ctype for a in spec.args], compiler.demangle), \
            (name, compiled.entries())
