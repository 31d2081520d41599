"""Red-team recognition: naive kernels written the way other CUDA programmers write them.

Issue 11 asks that gains carry to kernels written by other people. Every kernel under
tests/data/redteam/<family>/ is an independent naive version of one idiom (a whole-array scan,
a batched small GEMM, a 2-D/3-D stencil or depthwise conv, and the breadth families: full, row
and column reductions, multi-pass row ops, GEMV, transposes, histograms, elementwise maps, CSR
SpMV/SpMM, gathers/scatters, argmax/top-k), varying guards, index types, loop
forms, helpers, macros and launch shapes, and names the applier that must recognise it
(`// applier: Name`). A kernel its applier does not recognise yet is listed in `MISSES` with
the smallest construct that breaks recognition: strict xfails, so whoever fixes one removes
its entry. Every rewrite compiles with nvcc (marker `nvcc`); tests/gpu/test_gpu_appliers.py
does not run these (no GPU check here: the differential check on the GPU is the lead's run).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from nvcc_check import compile_together, grid_sample

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, rewrites_of
from regrapht.search.appliers.common import Applier
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests/data/redteam"
BY_NAME: dict[str, Applier] = {a.__class__.__name__: a for a in APPLIERS}
H200_LIKE = DeviceLimits(132, 2048, 1024, 48 * 1024)

# family/kernel -> the construct that keeps its applier from recognising it (owners: scan ->
# appliers-a, batched_gemm -> hostile-spec, stencil and conv -> appliers-b, the breadth families -> corpus)
MISSES: dict[str, str] = {
    # breadth families (owner: corpus)
    "histogram/hist_image_2d_uchar": "2-D launch over the image (x, y): the rewrite of the 2-D privatised "
                                      "histogram failed the H200 differential check (2026-11-30, after 74ff04d); "
                                      "reverted until the cause is found",
}

CASES = sorted(f"{p.parent.name}/{p.name.removesuffix('.regrapht.toml')}" for p in DATA.glob("*/*.regrapht.toml"))


def case_input(case: str) -> tuple[tuple[str, ...], ApplierInput]:
    """The appliers any of which must recognise the kernel (`// applier: A or B`), and its input."""
    source = (DATA / f"{case}.cu").read_text()
    [kernel] = load_spec(DATA / f"{case}.regrapht.toml").kernels
    target = kernel_target(kernel)
    expected = re.search(r"// applier: (\w+(?: or \w+)*)", source)
    assert expected is not None, case
    names = tuple(expected.group(1).split(" or "))
    assert all(n in BY_NAME for n in names), case
    return names, ApplierInput(source, kernel.name, target.launch, target.constants, H200_LIKE)


def test_every_spec_lists_the_kernels_parameters_in_order() -> None:
    for case in CASES:
        source = (DATA / f"{case}.cu").read_text()
        [kernel] = load_spec(DATA / f"{case}.regrapht.toml").kernels
        signature = re.search(rf"__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?{kernel.name.split('<')[0]}"
                              rf"\s*\(([^)]*)\)", source)
        assert signature is not None, case
        params = [re.findall(r"\w+", p)[-1] for p in signature.group(1).split(",")]
        assert params == [a.name for a in kernel.args], case


def test_every_template_kernel_is_instantiated_in_its_file() -> None:
    """A template the file never instantiates compiles to no kernel at all (the GPU check then
    finds no entry to run); the red team's files have no host code, so they instantiate it."""
    for case in CASES:
        source = (DATA / f"{case}.cu").read_text()
        [kernel] = load_spec(DATA / f"{case}.regrapht.toml").kernels
        if "<" in kernel.name:
            name, arguments = kernel.name.split("<", 1)
            instantiation = rf"template\s+__global__\s+void\s+{name}\s*<\s*{re.escape(arguments[:-1].strip())}\s*>\s*\("
            assert re.search(instantiation, source), f"{case}: no `template __global__ void {kernel.name}(...);`"


def _marked(case: str) -> object:
    if case in MISSES:
        return pytest.param(case, marks=pytest.mark.xfail(strict=True, reason=MISSES[case]))
    return case


@pytest.mark.parametrize("case", [_marked(c) for c in CASES])
def test_each_kernel_is_recognised_by_its_applier(case: str) -> None:
    expected, given = case_input(case)
    assert any(rewrites_of(BY_NAME[name], given) for name in expected), f"{' or '.join(expected)} did not recognise {case}"


# the first four families have eight versions or more; the breadth families at least three each
EIGHT_VERSIONS = {"scan", "stencil", "conv", "batched_gemm"}


def test_every_family_has_enough_versions_and_misses_name_real_files() -> None:
    families: dict[str, int] = {}
    for case in CASES:
        families[case.split("/")[0]] = families.get(case.split("/")[0], 0) + 1
    assert all(count >= (8 if family in EIGHT_VERSIONS else 3) for family, count in families.items()), families
    assert len(families) >= 15, families
    assert set(MISSES) <= set(CASES)


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("family", sorted({c.split("/")[0] for c in CASES}))
def test_every_rewrite_compiles(tmp_path: Path, family: str) -> None:
    """The originals and the rewrites of one family (of a grid, a sample), each as if compiled
    alone (`compile_together`: the distinct texts of the same includes share one nvcc run, a
    namespace each)."""
    sources, labels = [], []
    for case in CASES:
        if not case.startswith(family + "/"):
            continue
        expected, given = case_input(case)
        # the original too (a red-team kernel must itself be valid CUDA), then every rewrite
        # (of a parameter grid, its first points, middle and last: `grid_sample`)
        sources.append(given.source)
        labels.append(f"{case} (the original)")
        for name in expected:
            for rewrite in grid_sample(rewrites_of(BY_NAME[name], given)):
                sources.append(rewrite.source)
                labels.append(f"{case}: {name} {rewrite.note}")
    # ParallelScan's bounded 1024-thread raking scans of 8-byte values spill (unbounded they could
    # not launch: test_scan_launch_bounds.py)
    compile_together(sources, tmp_path, family, spills_allowed=family == "scan", labels=labels)


def test_callers_read_the_plain_form_only_when_the_original_has_no_rewrite() -> None:
    # the stencil appliers have no plain-form fallback of their own: rewrites_of gives them one
    (first, *_), macro = case_input("stencil/jacobi_macro_idx")
    assert BY_NAME[first].apply(macro) == []
    rewrites = rewrites_of(BY_NAME[first], macro)
    assert rewrites and all(r.note.endswith("(read in plain form)") for r in rewrites)
    assert all(r.source.startswith(macro.source[: macro.source.index("__global__")]) for r in rewrites)  # file kept
    (first, *_), plain = case_input("stencil/jacobi_xy_skip_boundary")
    assert rewrites_of(BY_NAME[first], plain) == BY_NAME[first].apply(plain)


CONVERTING_HELPER = """__device__ int add(int a, int b) { return a + b; }

__global__ void truncating_scan(const float *x, float *y, int n)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        float acc = 0.0f;
        for (int i = 0; i < n; ++i) {
            acc = add(acc, x[i]);
            y[i] = acc;
        }
    }
}
"""


def test_a_helper_that_converts_its_arguments_is_not_read_as_plain_arithmetic() -> None:
    given = ApplierInput(CONVERTING_HELPER, "truncating_scan", LaunchConfig(("1",), ("1",)), {}, H200_LIKE)
    assert rewrites_of(BY_NAME["ParallelScan"], given) == []  # the original truncates every partial sum


# One change to a recognised red-team kernel that breaks its meaning: no applier of its family
# may rewrite the result (each mechanism added for the breadth families has its near-misses).
NEAR_MISSES: list[tuple[str, str, str]] = [
    # per-thread minimum over a grid-stride while loop: a data-dependent early exit
    ("reduction/min_int_gridstride_while", "if (v < lo)\n            lo = v;",
     "if (v < -999999)\n            break;\n        if (v < lo)\n            lo = v;"),
    # ... the update keeps the larger value while the atomic keeps the smaller (mixed operators)
    ("reduction/min_int_gridstride_while", "if (v < lo)\n            lo = v;", "lo = v < lo ? lo : v;"),
    # ... a value other than the compared one is kept (not a minimum)
    ("reduction/min_int_gridstride_while", "if (v < lo)\n            lo = v;", "if (v < lo)\n            lo = v - 1;"),
    # ... the counter is also stepped by the data (a data-dependent stride)
    ("reduction/min_int_gridstride_while", "k += step;", "k += step + (v & 1);"),
    # ... the start depends on the thread
    ("reduction/min_int_gridstride_while", "int lo = INT_MAX;", "int lo = (int)threadIdx.x;"),
    # ... the bound is loaded from memory
    ("reduction/min_int_gridstride_while", "while (k < count)", "while (k < data[0])"),
    # a per-thread sum that does not start at zero (each thread would add it once)
    ("reduction/sum_double_one_block", "double partial = 0.0;", "double partial = 1.0;"),
    # a packed-key maximum whose update reads the accumulator (not a plain maximum)
    ("argmax/global_argmax_packed_gridstride", "mine = key > mine ? key : mine;", "mine = key > mine ? key : mine + 1;"),
    # the address of the atomic moves with the thread (aliasing: a scatter, not a reduction)
    ("argmax/global_argmax_packed_gridstride", "atomicMax(best, mine);", "atomicMax(best + (threadIdx.x & 1), mine);"),
    # an in-place map whose store is conditional (a lane must keep its old value)
    ("elementwise/relu_clamp_int_unsigned", "data[i] = clamp_to(data[i], cap);", "if (data[i] < 0) data[i] = 0;"),
    # ... whose conditional read is of the next element (aliasing another point's store)
    ("elementwise/relu_clamp_int_unsigned", "data[i] = clamp_to(data[i], cap);", "data[i] = cap > 0 ? data[i] : data[i + 1];"),
    # ... with an early return inside the work
    ("elementwise/relu_clamp_int_unsigned", "data[i] = clamp_to(data[i], cap);",
     "if (data[i] == cap) return;\n    data[i] = clamp_to(data[i], cap);"),
    # a grid-stride map whose counter also moves in the body (some points twice, some never)
    ("elementwise/gelu_double_gridstride", "double v = in[i];", "double v = in[i];\n        i += v > 0.0;"),
    # ... that leaves the loop on the data (later points depend on earlier ones)
    ("elementwise/gelu_double_gridstride", "double v = in[i];", "double v = in[i];\n        if (v > 3.9) break;"),
    # ... that strides by one block's threads instead of the grid's (blocks overlap)
    ("elementwise/gelu_double_gridstride", "i += (long long)blockDim.x * gridDim.x", "i += blockDim.x"),
    # ... whose bound is loaded from memory
    ("elementwise/gelu_double_gridstride", "i < n;", "i < (long long)in[0];"),
    # a templated per-thread sum that starts at one, not zero (each thread would add it once)
    ("reduction/sum_template_functional_zero", "T s = T(0);", "T s = T(1);"),
    # a row pass inside a helper (given a local row pointer) that leaves the row early on the data
    ("row_ops/softmax_device_helpers", "for (int j = 1; j < n; ++j) m = fmaxf(m, r[j]);",
     "for (int j = 1; j < n; ++j) { if (r[j] > 3.9f) break; m = fmaxf(m, r[j]); }"),
    # ... whose sum is not associative as written (rescaled by each element)
    ("row_ops/softmax_device_helpers", "for (int j = 0; j < n; ++j) s += expf(r[j] - m);",
     "for (int j = 0; j < n; ++j) s = s * 0.5f + expf(r[j] - m);"),
    # a count-down do/while that stops before the first element (its range is [1, len))
    ("reduction/sum_single_thread_do_while", "} while (i > 0);", "} while (i > 1);"),
    # ... that steps down after the read (its range is [0, len], one past the end)
    ("reduction/sum_single_thread_do_while", "--i;\n        total += a[i];", "total += a[i];\n        --i;"),
    # ... whose counter is read after the loop
    ("reduction/sum_single_thread_do_while", "*s = total;", "*s = total + i;"),
    # a reused while counter not started afresh: the second loop starts where the first ended
    ("row_ops/softmax_online_while", "j = 0;\n        while", "while"),
    # ... whose value after a loop is read
    ("row_ops/softmax_online_while", "float inv = 1.0f / total;", "float inv = 1.0f / (total + j);"),
    # block-local pointers guarded by the thread's index in its block, not the point's
    ("elementwise/block_pointer_offsets", "if (blockIdx.x * blockDim.x + t < n)", "if (t < n)"),
    # ... with the output pointer moved on before the store (not a fixed offset of y)
    ("elementwise/block_pointer_offsets", "int t = threadIdx.x;", "int t = threadIdx.x;\n    yb += gridDim.x;"),
    # ... with the thread index changed after it is read
    ("elementwise/block_pointer_offsets", "int t = threadIdx.x;", "int t = threadIdx.x;\n    t = t % 32;"),
    # a CSR SpMM whose stored output is also read (a later column would see an earlier store)
    ("spmv/spmm_row_per_thread", "C[row * NCOLS + c] = sum;", "C[row * NCOLS + c] = sum + C[row * NCOLS];"),
    # ... with one column too many (a row's last store is the next row's first element)
    ("spmv/spmm_row_per_thread", "c < NCOLS;", "c <= NCOLS;"),
    # ... whose row range moves with the column
    ("spmv/spmm_row_per_thread", "e = rowptr[row];", "e = rowptr[row] + c;"),
    # a grid-stride histogram whose counter is redeclared in the body (the guard would read the outer)
    ("histogram/hist_bytes_gridstride", "atomicAdd(&bins[buf[i]], 1u);", "{ size_t i = 0; atomicAdd(&bins[buf[i]], 1u); }"),
]


@pytest.mark.parametrize("case,old,new", NEAR_MISSES)
def test_near_misses_of_the_breadth_families_are_not_rewritten(case: str, old: str, new: str) -> None:
    expected, given = case_input(case)
    assert old in given.source, old
    changed = ApplierInput(given.source.replace(old, new), given.kernel, given.launch, given.constants, given.device)
    assert all(rewrites_of(BY_NAME[name], changed) == [] for name in expected), case


def test_a_one_block_loop_is_a_reduction_only_on_a_one_block_launch() -> None:
    (name,), given = case_input("reduction/sum_double_one_block")
    assert rewrites_of(BY_NAME[name], given)
    two_blocks = ApplierInput(given.source, given.kernel, LaunchConfig(("2",), ("1024",)), given.constants, given.device)
    assert rewrites_of(BY_NAME[name], two_blocks) == []  # every block adds the whole array


def test_a_grid_stride_loop_is_a_guard_only_when_the_launch_covers_its_range() -> None:
    for case in ("elementwise/gelu_double_gridstride", "gather/gather_2d_index_grid_stride",
                 "histogram/hist_bytes_gridstride"):
        (name,), given = case_input(case)
        assert rewrites_of(BY_NAME[name], given), case
        # 264 blocks loop over more points than they have threads: not one point per thread
        few = ApplierInput(given.source, given.kernel, LaunchConfig(("264",), given.launch.block), given.constants,
                           given.device)
        assert rewrites_of(BY_NAME[name], few) == [], case
