"""Per-block tree reductions (BlockReduceAtomic's `block_partials` form: sums, maxima and minima,
stored per block or added to a whole-array result with an atomic), their plain-form
passes (cooperative groups, `SharedMemory<T>`), and tile-row loops read as a thread per row
(TiledPermutation): what is recognised, what is not, and on the CPU emulation
(`cuda_on_cpu.h`: every thread a fiber, barriers real, a cub::BlockReduce stand-in) that
every rewrite of the red-team kernels writes what the original writes, at odd sizes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cpu_cuda import assert_same_outputs, needs_gxx
from nvcc_check import compile_together, needs_nvcc

from regrapht.app.optimize import kernel_target
from regrapht.idioms.spelling import builtins_unaliased, plain_spelling
from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, rewrites_of
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests/data/redteam"
BY_NAME = {type(a).__name__: a for a in APPLIERS}
H200 = DeviceLimits(132, 2048, 1024, 48 * 1024)
REDUCTIONS = sorted(p.name.removesuffix(".regrapht.toml") for p in (DATA / "block_reduction").glob("*.regrapht.toml"))


def _input(case: str, launch: LaunchConfig | None = None) -> ApplierInput:
    source = (DATA / f"{case}.cu").read_text()
    [kernel] = load_spec(DATA / f"{case}.regrapht.toml").kernels
    target = kernel_target(kernel)
    return ApplierInput(source, kernel.name, launch or target.launch, target.constants, H200)


def test_every_tree_reduction_gets_one_rewrite_per_block_width() -> None:
    for case in REDUCTIONS:
        given = _input(f"block_reduction/{case}")
        rewrites = rewrites_of(BY_NAME["BlockReduceAtomic"], given)
        threads = int(given.launch.block[0])
        widths = [threads // items for items in (1, 2, 4, 8) if threads // items >= 32]
        assert [r.launch.block for r in rewrites] == [(str(w),) for w in widths], case
        assert all(r.launch.grid == given.launch.grid and r.launch.shared_bytes == "0" for r in rewrites), case
        assert all("cub::BlockReduce" in r.source and "__syncthreads" not in r.source.split("__global__")[1]
                   for r in rewrites), case


def test_cooperative_groups_and_the_shared_proxy_are_written_plainly() -> None:
    given = _input("block_reduction/cg_shared_proxy")
    plain = plain_spelling(given.source, given.kernel)
    body = plain[plain.index("reduce0(T *g_idata") :]
    assert "cg::" not in body.split("template __global__")[0] and "cta" not in body
    assert "extern __shared__ T sdata[];" in body and body.count("__syncthreads()") == 2
    ranked = _input("block_reduction/strided_index_rank")
    plain = plain_spelling(ranked.source, ranked.kernel)
    assert "unsigned int t = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));" in plain
    assert "block.sync()" not in plain and "this_thread_block" not in plain


HANDLE_PASSED_ON = """#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ void wait_for(cg::thread_block b) { b.sync(); }
__global__ void k(const float *x, float *y)
{
    cg::thread_block cta = cg::this_thread_block();
    __shared__ float s[128];
    s[threadIdx.x] = x[blockIdx.x * 128 + threadIdx.x];
    wait_for(cta);
    for (unsigned int d = 64; d > 0; d >>= 1) {
        if (threadIdx.x < d) s[threadIdx.x] += s[threadIdx.x + d];
        cta.sync();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = s[0];
}
"""


def test_a_block_handle_used_otherwise_is_left_as_written() -> None:
    # passed to a function: the pass cannot know what it does with it, so nothing is rewritten
    assert plain_spelling(HANDLE_PASSED_ON, "k") == HANDLE_PASSED_ON
    given = ApplierInput(HANDLE_PASSED_ON, "k", LaunchConfig(("64",), ("128",)), {}, H200)
    assert rewrites_of(BY_NAME["BlockReduceAtomic"], given) == []


# One change to a recognised per-block reduction that breaks its meaning: no rewrite.
NEAR_MISSES: list[tuple[str, str, str]] = [
    # the first level is skipped: the sum of every other value
    ("interleaved_template", "unsigned int s = 1;", "unsigned int s = 2;"),
    # a barrier missing inside the halving loop: threads race on the buffer
    ("interleaved_template", "sdata[tid] += sdata[tid + s];\n        __syncthreads();",
     "sdata[tid] += sdata[tid + s];"),
    # the result is stored per thread, not per block
    ("interleaved_template", "g_partial[blockIdx.x] = sdata[0];", "g_partial[tid] = sdata[0];"),
    # ... by another thread than the one that ends with the sum
    ("interleaved_template", "if (tid == 0)", "if (tid == 1)"),
    # ... of another element than the sum's
    ("interleaved_template", "g_partial[blockIdx.x] = sdata[0];", "g_partial[blockIdx.x] = sdata[1];"),
    # the combine also reads global memory
    ("interleaved_template", "sdata[tid] += sdata[tid + s];", "sdata[tid] += sdata[tid + s] * g_in[0];"),
    # the result mixes in a scalar of the launch
    ("interleaved_template", "g_partial[blockIdx.x] = sdata[0];", "g_partial[blockIdx.x] = sdata[0] + n;"),
    # a halving that stops one level early
    ("extern_sequential", "stride > 0;", "stride > 1;"),
    # a difference, not a sum (not associative: no order of CUB's gives the tree's result)
    ("extern_sequential", "cache[lane] = cache[lane] + cache[lane + stride];",
     "cache[lane] = cache[lane] - cache[lane + stride];"),
    # a proxy pointer moved off the start of the buffer
    ("cg_shared_proxy", "T *sdata = SharedMemory<T>();", "T *sdata = SharedMemory<T>() + 1;"),
    # a strided index off by one: it reads slots nobody wrote
    ("strided_index_rank", "unsigned int index = 2 * s * t;", "unsigned int index = 2 * s * t + 1;"),
    # a running sum of another type than the buffer's (every level truncates)
    ("two_loads_template", "float mySum = (i < n)", "int mySum = (i < n)"),
    # the thread's value depends on the block's result of a previous step (an early exit)
    ("two_loads_template", "if (i + blockSize < n)\n        mySum += g_idata[i + blockSize];",
     "if (i + blockSize < n)\n        return;"),
    # --- a block's sum into a whole-array result with an atomic
    # every thread adds the block's sum (blockDim.x times over)
    ("atomic_l1_interleaved", "    if (tid == 0)\n        atomicAdd(norm, sdata[0]);", "    atomicAdd(norm, sdata[0]);"),
    # a difference in the tree
    ("atomic_l1_interleaved", "sdata[tid] += sdata[tid + s];", "sdata[tid] -= sdata[tid + s];"),
    # an exchange, not an accumulation
    ("atomic_l1_interleaved", "atomicAdd(norm, sdata[0]);", "atomicExch(norm, sdata[0]);"),
    # the step reads its partner without a barrier after the previous step's writes
    ("atomic_squares_sequential", "partial[lane] = partial[lane] + partial[lane + half];\n        __syncthreads();",
     "partial[lane] = partial[lane] + partial[lane + half];"),
    # the atomic adds another element than the block's sum
    ("atomic_squares_sequential", "atomicAdd(&out[0], partial[0]);", "atomicAdd(&out[0], partial[1]);"),
    # an output index that differs per thread (only thread 0's would be kept)
    ("atomic_row_counts", "atomicAdd(counts + blockIdx.y, hits[0]);", "atomicAdd(counts + t, hits[0]);"),
    # --- maxima and minima
    # a copy of the partner, not its maximum
    ("max_int_atomic_sequential", "best[tid] = max(best[tid], best[tid + s]);", "best[tid] = best[tid + s];"),
    # a step without its barrier
    ("max_int_atomic_sequential", "best[tid] = max(best[tid], best[tid + s]);\n        __syncthreads();",
     "best[tid] = max(best[tid], best[tid + s]);"),
    # maxima in the first levels, minima in the last: no one operator
    ("max_unsigned_ternary_atomic", "top[tid] = mine = other > mine ? other : mine;",
     "top[tid] = mine = s > 16 ? (other > mine ? other : mine) : (other < mine ? other : mine);"),
    # a float minimum through the source's own CAS overload of atomicMin: left as it is
    ("min_float_store_fminf", "block_min[blockIdx.x] = lows[0];", "atomicMin(block_min, lows[0]);"),
    # a maximum compared through a cast (signed order of unsigned keys: not their maximum)
    ("max_unsigned_ternary_atomic", "top[tid] = mine = other > mine ? other : mine;",
     "top[tid] = mine = (int)other > (int)mine ? other : mine;"),
    # a difference where the maximum was
    ("tpl_max_loop_store", "fmax(peak[t], peak[t + half])", "peak[t] - peak[t + half]"),
    # --- trees unrolled over a template block size
    # one unrolled level missing: half the block's values are never added
    ("tpl_unrolled_extern_sum", "    if (blockSize >= 128) { if (tid < 64) sdata[tid] += sdata[tid + 64]; __syncthreads(); }\n",
     ""),
    # one unrolled level without its barrier
    ("tpl_unrolled_extern_sum", "if (tid < 64) sdata[tid] += sdata[tid + 64]; __syncthreads();",
     "if (tid < 64) sdata[tid] += sdata[tid + 64];"),
    # the samples' warp-synchronous last steps (no barrier between them: a race on sm_70+)
    ("tpl_unrolled_atomic_sum", """    for (unsigned int offset = 32; offset > 0; offset /= 2) {
        if (tid < offset)
            sdata[tid] = mySum = mySum + sdata[tid + offset];
        __syncthreads();
    }""", """    if (tid < 32) {
        sdata[tid] = mySum = mySum + sdata[tid + 32];
        sdata[tid] = mySum = mySum + sdata[tid + 16];
        sdata[tid] = mySum = mySum + sdata[tid + 8];
        sdata[tid] = mySum = mySum + sdata[tid + 4];
        sdata[tid] = mySum = mySum + sdata[tid + 2];
        sdata[tid] = mySum = mySum + sdata[tid + 1];
    }"""),
]

# The source's own float atomicMin (a CAS loop; the near-miss above calls it)
FLOAT_ATOMIC_MIN = """__device__ float atomicMin(float *address, float value)
{
    int *word = (int *)address;
    int old = *word, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) <= value)
            break;
        old = atomicCAS(word, assumed, __float_as_int(value));
    } while (assumed != old);
    return __int_as_float(old);
}

"""


def _with_own_helpers(source: str) -> str:
    return source.replace("__global__ void block_minima", FLOAT_ATOMIC_MIN + "__global__ void block_minima")


@pytest.mark.parametrize("case,old,new", NEAR_MISSES)
def test_near_misses_of_the_tree_reductions_are_not_rewritten(case: str, old: str, new: str) -> None:
    given = _input(f"block_reduction/{case}")
    assert old in given.source, old
    changed = ApplierInput(_with_own_helpers(given.source.replace(old, new)), given.kernel, given.launch,
                           given.constants, given.device)
    assert rewrites_of(BY_NAME["BlockReduceAtomic"], changed) == []


# case -> (the operator the block run finds, the final statement of the rewrite's thread 0)
OPERATORS = {"atomic_l1_interleaved": ("sum", "atomicAdd(norm, rg_total_);"),
             "atomic_squares_sequential": ("sum", "atomicAdd(&out[0], rg_total_);"),
             "atomic_row_counts": ("sum", "atomicAdd(counts + blockIdx.y, rg_total_);"),
             "atomic_gridstride_dot": ("sum", "atomicAdd(result, rg_total_);"),
             "max_int_atomic_sequential": ("max", "atomicMax(result, rg_total_);"),
             "min_float_store_fminf": ("min", "block_min[blockIdx.x] = rg_total_;"),
             "max_unsigned_ternary_atomic": ("max", "atomicMax(&keys_max[0], rg_total_);"),
             "tpl_unrolled_extern_sum": ("sum", "g_odata[blockIdx.x] = rg_total_;"),
             "tpl_unrolled_atomic_sum": ("sum", "atomicAdd(g_total, rg_total_);"),
             "tpl_max_loop_store": ("max", "out[blockIdx.x] = rg_total_;")}


@pytest.mark.parametrize("case", sorted(OPERATORS))
def test_the_tree_s_operator_and_final_statement_are_kept(case: str) -> None:
    operator, final = OPERATORS[case]
    rewrites = rewrites_of(BY_NAME["BlockReduceAtomic"], _input(f"block_reduction/{case}"))
    assert rewrites, case
    for rewrite in rewrites:
        body = rewrite.source.split("__global__")[1]
        assert f"if (threadIdx.x == 0)\n        {final}" in body, rewrite.note
        assert ("Sum(rg_value_)" in body) == (operator == "sum"), rewrite.note
        assert (f"return {operator}(a, b);" in body) == (operator != "sum"), rewrite.note


def test_the_block_run_tells_the_operator_apart() -> None:
    from regrapht.idioms.block_partials import block_partial
    from regrapht.idioms.syntax import kernel_syntax

    given = _input("block_reduction/max_int_atomic_sequential")
    kernel = kernel_syntax(given.source, given.kernel)
    assert kernel is not None
    found = block_partial(kernel, 256, {})
    assert found is not None and found.operator == "max" and found.atomic == "atomicMax"
    as_min = given.source.replace("max(best[tid], best[tid + s])", "min(best[tid], best[tid + s])")
    kernel = kernel_syntax(as_min, given.kernel)
    assert kernel is not None
    found = block_partial(kernel, 256, {})
    assert found is not None and found.operator == "min"


def test_a_float_max_atomic_is_not_rewritten() -> None:
    # no native float atomicMax: a source that calls one has its own overload (a CAS loop)
    given = _input("block_reduction/min_float_store_fminf")
    own = _with_own_helpers(given.source.replace("block_min[blockIdx.x] = lows[0];", "atomicMin(block_min, lows[0]);"))
    changed = ApplierInput(own, given.kernel, given.launch, given.constants, given.device)
    assert rewrites_of(BY_NAME["BlockReduceAtomic"], changed) == []
    # the same tree's minimum of ints into a native atomicMin is rewritten
    ints = own.replace(FLOAT_ATOMIC_MIN, "").replace("float", "int").replace("3.0e38f", "2147483647")
    changed = ApplierInput(ints, given.kernel, given.launch, given.constants, given.device)
    assert [r.note for r in rewrites_of(BY_NAME["BlockReduceAtomic"], changed)][:1] == \
        ["shared-memory tree (min) -> cub::BlockReduce, one atomicMin per block"]


def test_the_tree_is_run_for_the_launch_it_has() -> None:
    # the strided index is written for THREADS = 128: a 256-thread launch leaves half unsummed
    wider = _input("block_reduction/strided_index_rank", LaunchConfig(("(n + 255) / 256",), ("256",)))
    assert rewrites_of(BY_NAME["BlockReduceAtomic"], wider) == []
    two_d = _input("block_reduction/extern_sequential", LaunchConfig(("(count + 511) / 512",), ("256", "2")))
    assert rewrites_of(BY_NAME["BlockReduceAtomic"], two_d) == []


TILE_NEAR_MISSES: list[tuple[str, str]] = [
    # the counter moves the load along a row, the thread's row down a column
    ("idata[index_in + i * width]", "idata[index_in + i]"),
    # ... twice as far as the thread's row
    ("odata[index_out + i]", "odata[index_out + 2 * i]"),
    # a step that is not the block's height (rows visited twice or skipped)
    ("i += BLOCK_ROWS", "i += 4"),
    # the loop stops before the tile's last rows (the launch's guard would not be the domain)
    ("i < TILE_DIM;", "i < TILE_DIM - 8;"),
    # the body carries a value from one row to the next
    ("odata[index_out + i] = idata[index_in + i * width];",
     "odata[index_out + i] = idata[index_in + i * width] + odata[index_out];"),
]


@pytest.mark.parametrize("old,new", TILE_NEAR_MISSES)
def test_near_misses_of_the_tile_row_loop_are_not_tiled(old: str, new: str) -> None:
    given = _input("transpose/transpose_tile_rows_loop")
    assert old in given.source, old
    changed = ApplierInput(given.source.replace(old, new), given.kernel, given.launch, given.constants, given.device)
    assert rewrites_of(BY_NAME["TiledPermutation"], changed) == []


# ------------------------------------------------------------------------- CPU emulation
def _for_cpu(source: str) -> str:
    """The emulator has no dynamically sized shared memory: `extern __shared__ T a[];` becomes a
    static buffer big enough for every launch here (16 KiB)."""
    return re.sub(r"extern\s+__shared__\s+([\w ]+?)\s+(\w+)\s*\[\s*\]\s*;", r"__shared__ \1 \2[4096];",
                  source)


# case -> the scalars that size it and their odd values: a partial last block
SIZES = {"interleaved_template": {"n": 256 * 3 + 77}, "extern_sequential": {"count": 512 * 2 + 5},
         "cg_shared_proxy": {"n": 256 * 2 + 131}, "strided_index_rank": {"n": 128 * 5 + 3},
         "two_loads_template": {"n": 512 * 2 + 300}, "atomic_l1_interleaved": {"n": 256 * 3 + 41},
         "atomic_squares_sequential": {"count": 512 * 2 + 99}, "atomic_row_counts": {"cols": 128 * 3 + 17, "rows": 5},
         "max_int_atomic_sequential": {"n": 256 * 3 + 7}, "min_float_store_fminf": {"n": 128 * 4 + 65},
         "max_unsigned_ternary_atomic": {"n": 512 * 2 + 301}, "tpl_unrolled_extern_sum": {"n": 512 * 2 + 33},
         "tpl_unrolled_atomic_sum": {"n": 512 * 2 + 257}, "tpl_max_loop_store": {"len": 128 * 3 + 100},
         "atomic_gridstride_dot": {"n": 256 * 5 + 33}}


@needs_gxx
@pytest.mark.parametrize("case", REDUCTIONS)
def test_every_tree_reduction_rewrite_matches_the_original_on_the_cpu(case: str, tmp_path: Path) -> None:
    given = _input(f"block_reduction/{case}")
    spec = (DATA / "block_reduction" / f"{case}.regrapht.toml").read_text()
    rewrites = rewrites_of(BY_NAME["BlockReduceAtomic"], given)
    assert rewrites
    assert_same_outputs(given.source, spec, rewrites, SIZES[case], tmp_path, below=1e-5, int_scale=5, prepare=_for_cpu)


@pytest.mark.nvcc
@needs_nvcc
def test_every_tree_reduction_rewrite_compiles(tmp_path: Path) -> None:
    sources = [r.source for case in REDUCTIONS for r in rewrites_of(BY_NAME["BlockReduceAtomic"],
                                                                      _input(f"block_reduction/{case}"))]
    assert len(sources) > 3 * len(REDUCTIONS)
    compile_together(sources, tmp_path)


@needs_gxx
def test_the_tile_row_transpose_rewrites_match_the_original_on_the_cpu(tmp_path: Path) -> None:
    given = _input("transpose/transpose_tile_rows_loop")
    spec = (DATA / "transpose" / "transpose_tile_rows_loop.regrapht.toml").read_text()
    rewrites = rewrites_of(BY_NAME["TiledPermutation"], given)
    assert len(rewrites) > 4
    # the first tiles and the grid's end; no guard in the original: sizes of whole 32x32 tiles, not square
    assert_same_outputs(given.source, spec, rewrites[:3] + rewrites[-2:], {"width": 96, "height": 64}, tmp_path)


# ------------------------------------------------------------------ shared-tile matmuls
MATMULS = sorted(p.name.removesuffix(".regrapht.toml") for p in (DATA / "matmul").glob("*.regrapht.toml"))

MATMUL_NEAR_MISSES: list[tuple[str, str, str]] = [
    # each tile's product overwrites the sum (not a dot product over K)
    ("shared_tiles_template", "acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];",
     "acc = As[threadIdx.y][k] * Bs[k][threadIdx.x];"),
    # a sum of sums, not of products
    ("shared_tiles_template", "acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];",
     "acc += As[threadIdx.y][k] + Bs[k][threadIdx.x];"),
    # the tile counter steps A by one element, not a tile (A(row, t + k), read twice over)
    ("shared_tiles_template", "A[row * K + t * TILE + threadIdx.x]", "A[row * K + t + threadIdx.x]"),
    # the product reads the tile's row where it should read its column
    ("shared_tiles_template", "acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];",
     "acc += As[k][threadIdx.y] * Bs[k][threadIdx.x];"),
    # the second barrier is missing: the next tile's loads race with this tile's reads
    ("shared_tiles_template", "acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];\n        __syncthreads();",
     "acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];"),
    # the inner loop covers half a tile
    ("shared_tiles_template", "k < TILE;", "k < TILE / 2;"),
    # guarded loads over floor(K / TILE) tiles: the original leaves K's last partial tile out
    ("shared_tiles_ceil_guarded", "ph < (k + TILE_W - 1) / TILE_W;", "ph < k / TILE_W;"),
    # a load guarded by a bound the store does not have (rows the sum would wrongly include)
    ("shared_tiles_ceil_guarded", "(row < m && ph * TILE_W", "(row < m - 1 && ph * TILE_W"),
    # B's load not guarded along K (it would read past K where A's zeros stand)
    ("shared_tiles_ceil_guarded", "(ph * TILE_W + threadIdx.y < k && col < n)", "(col < n)"),
    # the zero fill is not zero
    ("shared_tiles_ceil_guarded", "(ph * TILE_W + threadIdx.y) * n + col] : 0.0f;",
     "(ph * TILE_W + threadIdx.y) * n + col] : 1.0f;"),
    # B's load uses the column through a local mixing the thread's x (it is read by another thread)
    ("shared_tiles_locals_unguarded", "sB[ty][tx] = B[(m * BLOCK_SIZE + ty) * wB + c];",
     "sB[ty][tx] = B[(m * BLOCK_SIZE + tx) * wB + c];"),
]


@pytest.mark.parametrize("case,old,new", MATMUL_NEAR_MISSES)
def test_near_misses_of_the_shared_tile_matmuls_are_not_retiled(case: str, old: str, new: str) -> None:
    given = _input(f"matmul/{case}")
    assert old in given.source, old
    changed = ApplierInput(given.source.replace(old, new), given.kernel, given.launch, given.constants, given.device)
    assert rewrites_of(BY_NAME["MatmulTiling"], changed) == []


def test_a_shared_tile_matmul_is_read_only_on_a_block_of_its_tile() -> None:
    given = _input("matmul/shared_tiles_template")
    assert rewrites_of(BY_NAME["MatmulTiling"], given)
    wider = ApplierInput(given.source, given.kernel, LaunchConfig(("(N + 31) / 32", "(M + 15) / 16"), ("32", "16")),
                         given.constants, given.device)
    assert rewrites_of(BY_NAME["MatmulTiling"], wider) == []


# sizes: K not a multiple of the tile where the kernel allows it (both sum the whole tiles only)
MATMUL_SIZES = {"shared_tiles_template": {"M": 40, "N": 24, "K": 40},
                "shared_tiles_ceil_guarded": {"m": 37, "n": 21, "k": 45},
                "shared_tiles_macro_index": {"M": 33, "N": 17, "K": 48},
                "shared_tiles_locals_unguarded": {"hA": 64, "wA": 96, "wB": 32}}


@needs_gxx
@pytest.mark.parametrize("case", MATMULS)
def test_the_shared_tile_matmul_rewrites_match_the_original_on_the_cpu(case: str, tmp_path: Path) -> None:
    given = _input(f"matmul/{case}")
    spec = (DATA / "matmul" / f"{case}.regrapht.toml").read_text()
    rewrites = rewrites_of(BY_NAME["MatmulTiling"], given)
    assert len(rewrites) > 4
    assert_same_outputs(given.source, spec, rewrites[:2] + rewrites[-1:], MATMUL_SIZES[case], tmp_path, below=1e-4)


ALIASES = """__global__ void k(float *y, int n)
{
    int tx = threadIdx.x, bx = blockIdx.x;
    unsigned int bd = blockDim.x;
    int moved = threadIdx.y;
    moved += 1;
    if (bx * bd + tx < n)
        y[bx * bd + tx] = moved;
}
"""


def test_locals_that_only_rename_a_built_in_are_written_as_it() -> None:
    plain = builtins_unaliased(ALIASES, "k")
    assert "y[((int)blockIdx.x) * blockDim.x + ((int)threadIdx.x)] = moved;" in plain  # signed: cast; unsigned: bare
    assert "int tx" not in plain and "bd" not in plain
    assert "int moved = threadIdx.y;" in plain  # changed later: not an alias
    shadowed = ALIASES.replace("y[bx * bd + tx] = moved;", "{ int tx = 3; y[bx * bd + tx] = moved; }")
    assert "int tx = threadIdx.x" in builtins_unaliased(shadowed, "k")
