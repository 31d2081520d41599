"""The CUB appliers of reductions, row operations, CSR rows, column reductions and scans.

Every kernel under tests/data/appliers/ is written differently from the others and names the
applier that must rewrite it (`// applier: Name`); none of the other idiom appliers may match
it. Near-misses (one change that breaks the idiom's meaning) must not be rewritten by any.
Every rewrite compiles with nvcc (marker `nvcc`); tests/gpu/test_gpu_appliers.py checks a sample
of them (whole grids: tests/gpu/test_structural_grids_gpu.py) against the originals on a GPU.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from nvcc_check import compile_together, grid_sample

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import ApplierInput, DeviceLimits
from regrapht.search.appliers.column_reduction import ColumnSplitReduction
from regrapht.search.appliers.common import Applier, Rewrite
from regrapht.search.appliers.csr_rows import CsrGroupPerRow
from regrapht.search.appliers.full_reduction import BlockReduceAtomic
from regrapht.search.appliers.row_ops import GroupPerRow
from regrapht.search.appliers.scan import ParallelScan
from regrapht.search.appliers.topk import WarpTopK
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests/data/appliers"
IDIOM_APPLIERS: dict[str, Applier] = {a.__class__.__name__: a for a in (
    BlockReduceAtomic(), GroupPerRow(), CsrGroupPerRow(), ColumnSplitReduction(), ParallelScan(), WarpTopK())}
KB48 = 48 * 1024
H200_LIKE: DeviceLimits | None = DeviceLimits(132, 2048, 1024, KB48)


def case_input(name: str, device: DeviceLimits | None = H200_LIKE) -> tuple[str, ApplierInput]:
    spec_path = DATA / f"{name}.regrapht.toml"
    source = (DATA / f"{name}.cu").read_text()
    [kernel] = load_spec(spec_path).kernels
    target = kernel_target(kernel)
    expected = re.search(r"// applier: (\w+)", source)
    assert expected is not None
    return expected.group(1), ApplierInput(source, kernel.name, target.launch, target.constants, device)


CASES = sorted(p.name.removesuffix(".regrapht.toml") for p in DATA.glob("*.regrapht.toml"))


@pytest.mark.parametrize("name", CASES)
def test_each_kernel_is_rewritten_by_its_applier_only(name: str) -> None:
    expected, given = case_input(name)
    for applier_name, applier in IDIOM_APPLIERS.items():
        rewrites = applier.apply(given)
        if applier_name == expected:
            assert rewrites, f"{applier_name} did not rewrite {name}"
            for rewrite in rewrites:
                assert "#include <cub/cub.cuh>" in rewrite.source or "cub::" not in rewrite.source
                assert _signature(rewrite.source, given.kernel) == _signature(given.source, given.kernel)
        else:
            assert rewrites == [], f"{applier_name} also rewrote {name}"


def test_every_applier_has_three_differently_written_kernels() -> None:
    counts: dict[str, int] = {}
    for name in CASES:
        expected, _ = case_input(name)
        counts[expected] = counts.get(expected, 0) + 1
    assert set(counts) == set(IDIOM_APPLIERS) and min(counts.values()) >= 3, counts


def _signature(source: str, kernel: str) -> str:
    # grid points declare __launch_bounds__(their block) after __global__
    match = re.search(rf"__global__\s+(?:__launch_bounds__\s*\(\d+\)\s+)?void\s+{kernel}\s*\(([^)]*)\)", source)
    assert match is not None
    return " ".join(match.group(1).split())


def _rewrite(name: str, device: DeviceLimits | None = H200_LIKE) -> list[Rewrite]:
    expected, given = case_input(name, device)
    return IDIOM_APPLIERS[expected].apply(given)


# ------------------------------------------------------------------------------ what they write
def test_launches_follow_the_device() -> None:
    small = DeviceLimits(20, 2048, 1024, KB48)
    assert [r.launch.grid for r in _rewrite("sum_squares_atomic", small)][0] == ("min((n + 255) / 256, 160)",)
    assert [r.launch.grid for r in _rewrite("sum_squares_atomic")][0] == ("min((n + 255) / 256, 1056)",)
    unknown = _rewrite("sum_squares_atomic", None)
    assert all("min(" not in r.launch.grid[0] for r in unknown)
    # Column tiles: 1024 columns fill 4 SMs with 32-wide tiles of 256 threads, 20 SMs with
    # 16-wide tiles of 1024, and need 8-wide tiles of 1024 threads on 132.
    tiny = DeviceLimits(4, 2048, 1024, KB48)

    def single(device: DeviceLimits | None) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        return [(r.launch.grid, r.launch.block) for r in _rewrite("column_sum", device) if "per thread" not in r.note]

    assert single(tiny)[0] == (("(cols + 31) / 32",), ("256",))
    assert single(small)[0] == (("(cols + 15) / 16",), ("1024",))
    assert single(H200_LIKE)[0] == (("(cols + 7) / 8",), ("1024",))
    # Four columns per thread: 1024 columns make 32 tiles of 32 (or 64 of 16): 256-thread
    # blocks fill 4 SMs, 1024-thread blocks are the most 20 or 132 SMs get.
    # (The first two rewrites; the rest of the grid follows the four first choices.)
    multi = [(r.launch.grid, r.launch.block) for r in _rewrite("column_sum", tiny)[:2]]
    assert multi == [(("(cols + 31) / 32",), ("256",)), (("(cols + 15) / 16",), ("256",))]
    multi = [(r.launch.grid, r.launch.block) for r in _rewrite("column_sum")[:2]]
    assert multi == [(("(cols + 31) / 32",), ("1024",)), (("(cols + 15) / 16",), ("1024",))]


def test_row_rewrites_use_cub_and_keep_the_statements() -> None:
    rewrites = _rewrite("softmax_rows")
    assert len(rewrites) >= 12 and all("cub::" in r.source for r in rewrites)
    first = rewrites[0].source
    assert "cub::WarpReduce<float, 32>" in first  # 1024 columns: a warp per row first
    assert "__expf(in[j] - m) * inv" in first and "fmaxf(a, b)" in first
    argmax = _rewrite("argmax_rows")[0].source
    assert "b.value > a.value || (b.value == a.value && b.index < a.index)" in argmax  # first of equal values
    gemv = _rewrite("gemv_rows")[0].source
    assert "if (rg_lane_ == 0) {\n" in gemv and "y[i] = alpha * dot + beta * y[i];" in gemv


def test_columns_per_thread_share_the_row_loop() -> None:
    rewrites = _rewrite("gemv_t_scaled_template")
    first = rewrites[0]
    assert first.note.startswith("column tiles of 32, 4 columns per thread")
    assert first.launch.grid == ("(cols + 31) / 32",)
    # one row loop, four renamed copies of the statement, each output written under its own guard
    assert first.source.count("for (int r = (0) + rg_h_; r < (rows); r += ") == 1
    for k in range(4):
        assert f"rg_dot_{k}_ += A[(size_t)r * cols + rg_col_{k}_] * x[r];" in first.source
        assert f"y[rg_col_{k}_] = alpha * rg_dot_{k}_ + beta * y[rg_col_{k}_];" in first.source
    assert "__shared__ T rg_shares_dot_[" in first.source  # the template's own type
    assert "#pragma unroll 8" not in first.source  # the original's hint for the replaced loop
    locals_renamed = _rewrite("dgemv_colmajor_while")[0].source
    assert "const double rg_w_3_ = v[c];" in locals_renamed and "++c" not in locals_renamed
    # a row range that depends on the column (a triangle) keeps one column per thread
    _, given = case_input("column_sum")
    triangle = ApplierInput(given.source.replace("r < rows", "r < c"), given.kernel, given.launch,
                            given.constants, given.device)
    notes = [r.note for r in ColumnSplitReduction().apply(triangle)]
    assert notes and not any("per thread" in n for n in notes)


def test_items_along_y_or_a_linear_2d_id_need_a_launch_of_one_thread_per_item() -> None:
    assert _rewrite("column_sum_yaxis") and _rewrite("gemv_rows_block2d") and _rewrite("spmv_csr_grid2d")
    _, given = case_input("column_sum_yaxis")
    # 32 threads along x run every column 32 times (the original's duplicate writes): not one per item
    doubled = ApplierInput(given.source, given.kernel, LaunchConfig(("1", "(ncols + 3) / 4"), ("32", "4")),
                           given.constants, given.device)
    assert ColumnSplitReduction().apply(doubled) == []
    # a grid that does not reach the last columns
    short = ApplierInput(given.source, given.kernel, LaunchConfig(("1", "ncols / 128"), ("1", "128")),
                         given.constants, given.device)
    assert ColumnSplitReduction().apply(short) == []
    _, grid2d = case_input("spmv_csr_grid2d")
    missing_y = ApplierInput(grid2d.source, grid2d.kernel, LaunchConfig(("min((rows + 127) / 128, 16)",), ("128",)),
                             grid2d.constants, grid2d.device)
    assert CsrGroupPerRow().apply(missing_y) == []


def test_fused_multiply_add_updates_are_sums() -> None:
    fused = _variant("gemv_transposed", "acc += A[(size_t)i * n + j] * x[i];", "acc = fmaf(A[(size_t)i * n + j], x[i], acc);")
    rewrites = ColumnSplitReduction().apply(fused)
    assert rewrites and "rg_acc_0_ = fmaf(A[(size_t)i * n + rg_j_0_], x[i], rg_acc_0_);" in rewrites[0].source
    # the accumulator as a factor: not a sum
    scaled = _variant("gemv_transposed", "acc += A[(size_t)i * n + j] * x[i];", "acc = fmaf(acc, x[i], A[(size_t)i * n + j]);")
    assert ColumnSplitReduction().apply(scaled) == []


def test_short_rows_get_part_of_a_warp() -> None:
    first = _rewrite("row_mean_short")[0]
    assert "cub::WarpReduce<float, 4>" in first.source and first.launch.grid == ("(samples + 63) / 64",)
    assert "const int at = s * width + f;" in first.source


def test_csr_widths_follow_the_average_row() -> None:
    notes = [r.note for r in _rewrite("spmv_csr")]
    # the row count varies: no average known, 8 lanes first (then the rest of the grid)
    assert [n.split(" per")[0] for n in notes[:4]] == ["8 lanes", "16 lanes", "one warp", "4 lanes"]
    _, given = case_input("spmv_csr")
    fixed = ApplierInput(given.source, given.kernel, given.launch, {"rows": 1000, "vals": 9000, "col_idx": 9000})
    notes = [r.note for r in CsrGroupPerRow().apply(fixed)]
    # 9 nonzeros per row: the closest widths first
    assert [n.split(" per")[0] for n in notes[:4]] == ["8 lanes", "4 lanes", "16 lanes", "one warp"]
    assert all("__ldg loads of col_idx, vals, x" in n for n in notes)


def test_csr_rows_read_values_indices_and_vector_through_the_read_only_path() -> None:
    first = _rewrite("spmv_csr_gridstride")[0]
    assert "const float a = __ldg(&vals[p]);" in first.source
    assert "acc += a * __ldg(&x[__ldg(&col_idx[p])]);" in first.source
    assert "row_ptr[i]" in first.source and "__ldg(&row_ptr" not in first.source  # the range stays as written
    walked = _rewrite("spmv_csr_pointer_walk")[0].source
    assert "__ldg(&" in walked and "++v;" not in walked


def test_row_scans_are_tiled_with_several_items_per_thread_first() -> None:
    first, *others = _rewrite("row_cumsum")  # rows of 2048 floats: 8 per thread cover a row
    assert "cub::BlockExchange<float, 256, 8>" in first.source and "WarpStripedToBlocked" in first.source
    assert "InclusiveSum(rg_scanned_, rg_scanned_, rg_tile_total_)" in first.source
    assert first.launch.block == ("256",) and others  # the one-item-per-lane groups remain candidates
    short = _rewrite("row_exclusive_scan_int")[0]  # rows of 200: a warp per row first
    assert "cub::WarpScan" in short.source and "BlockExchange" not in short.source


def test_whole_array_scan_is_single_pass() -> None:
    rewrite, *_ = _rewrite("array_scan_single")
    assert "cub::BlockScan<float, 256, cub::BLOCK_SCAN_WARP_SCANS>" in rewrite.source
    assert "cub::BlockExchange<float, 256, 16>" in rewrite.source and "WarpStripedToBlocked" in rewrite.source
    assert "__device__ unsigned int rg_prefix_sum_flag[" in rewrite.source
    # 16 floats per thread in tiles of 4096; as many blocks as the device holds at once.
    assert rewrite.launch.block == ("256",) and rewrite.launch.grid == ("min(((n) - (0) + 4095) / 4096, 1056)",)
    small = DeviceLimits(20, 1024, 1024, KB48)
    on_small, *_ = _rewrite("array_scan_single", small)
    assert on_small.launch.grid == ("min(((n) - (0) + 4095) / 4096, 80)",)
    doubles, *_ = _rewrite("array_scan_double")
    assert "cub::BlockExchange<double, 256, 8>" in doubles.source and "ExclusiveSum" in doubles.source
    inclusive, *_ = _rewrite("scan_recurrence_inclusive")
    assert "y[i] = rg_run_;" in inclusive.source and "InclusiveSum" in inclusive.source
    assert inclusive.launch.grid == ("min(((n) - ((1) - 1) + 2047) / 2048, 1056)",)
    exclusive, *_ = _rewrite("scan_recurrence_exclusive")
    assert "const int i = (int)(rg_j_ + 1);" in exclusive.source and "ExclusiveSum" in exclusive.source
    assert "rg_value_ = (i < (n) ? (in[i - 1]) : (double)0);" in exclusive.source
    assert "double rg_run_ = (double)(0.0);" in exclusive.source
    template, *_ = _rewrite("scan_template_while")
    assert "cub::BlockScan<T, 256" in template.source and "16>" in template.source  # 4-byte T: 16 per thread
    total, *_ = _rewrite("array_exclusive_scan_total")
    assert "ExclusiveSum" in total.source and "*total = running;" in total.source


# ------------------------------------------------------------------------------ near-misses
def _variant(name: str, old: str, new: str) -> ApplierInput:
    _, given = case_input(name)
    assert old in given.source, old
    return ApplierInput(given.source.replace(old, new), given.kernel, given.launch, given.constants, given.device)


NEAR_MISSES = {
    "BlockReduceAtomic": [
        # the address moves with the thread: a scatter, not a reduction
        ("sum_squares_atomic", "atomicAdd(&out[0], v * v);", "atomicAdd(&out[idx % 4], v * v);"),
        # a second effect besides the atomic
        ("count_above", "atomicAdd(count, 1u);", "{ atomicAdd(count, 1u); atomicAdd(count + 1, 1u); }"),
        # the per-thread sum does not start at zero
        ("chunked_double_sum", "double partial = 0.0;", "double partial = 1.0;"),
        # a chunk index that skips elements (t * per_thread * 2)
        ("chunked_double_sum", "long long e = t * per_thread + k;", "long long e = t * per_thread * 2 + k;"),
        # the single thread stops early
        ("single_thread_norm", "s += fabsf(v[i]);", "{ if (v[i] > 0.99f) break; s += fabsf(v[i]); }"),
    ],
    "GroupPerRow": [
        # an early return inside the row loop
        ("argmax_rows", "if (s > top) { top = s; at = c; }", "if (s > top) { top = s; at = c; } if (s < -1e30f) return;"),
        # online softmax: the sum is rescaled by the running maximum (not associative as written)
        ("softmax_rows", "denom += __expf(in[j] - m);", "denom = denom * 0.5f + __expf(in[j] - m);"),
        # the row length is loaded from memory
        ("gemv_rows", "for (int k = 0; k < n; k++)", "for (int k = 0; k < (int)x[i]; k++)"),
        # writes the output and reads it back at another index (aliasing)
        ("rmsnorm_rows", "out[h + tok * hidden] = in[h + tok * hidden] * scale * weight[h];",
         "out[h + tok * hidden] = in[h + tok * hidden] * scale * weight[h] + out[tok * hidden];"),
        # calls a function that may have effects
        ("layernorm_rows", "var /= d;", "var /= d; __threadfence();"),
        # the sum kept in y[row] is halved every step (not associative as written)
        ("dgemv_rows_inplace", "y[row] = y[row] + A", "y[row] = y[row] * 0.5 + A"),
        # the gathered row is read with a stride of 2 (every other element)
        ("gather_rows_loop", "table[src * width + k]", "table[src * width + 2 * k]"),
        # the row pointer is bumped twice per element (reads every other element)
        ("gemv_rows_pointer_walk", "++a;\n", "++a;\n            ++a;\n"),
    ],
    "CsrGroupPerRow": [
        # the row range is not ptr[row] .. ptr[row + 1]
        ("spmv_csr", "k < row_ptr[row + 1]", "k < row_ptr[row + 2]"),
        # the accumulation reads another row's result (a recurrence)
        ("csr_row_absmax", "m = fmaxf(m, fabsf(vals[k]));", "m = fmaxf(m * 0.5f, fabsf(vals[k]));"),
        # the row loop ends early on data
        ("spmv_csr_gridstride", "acc += a * x[col_idx[p]];", "if (a > 2.0f) break; acc += a * x[col_idx[p]];"),
        # the walked value pointer is read after the loop (its final position matters)
        ("spmv_csr_pointer_walk", "y[r] = sum;", "y[r] = sum + *v;"),
        # the row's last entry is left out (range ptr[r] .. ptr[r + 1] - 1)
        ("dspmv_csr_scaled_template", "k < ptr[row + 1]", "k < ptr[row + 1] - 1"),
    ],
    "ColumnSplitReduction": [
        # every column writes the same element
        ("column_sum", "sums[c] = s;", "sums[0] = s;"),
        # a non-associative update
        ("gemv_transposed", "acc += A[(size_t)i * n + j] * x[i];", "acc = acc * x[i] + A[(size_t)i * n + j];"),
        # the row count comes from memory
        ("column_min_int", "row < height", "row < lowest[0]"),
        # reads another column's output (aliasing between items)
        ("gemv_t_scaled_template", "beta * y[col];", "beta * y[col + 1];"),
        # the row loop's length is loaded from memory
        ("dgemv_colmajor_while", "while (c < ncols)", "while (c < (int)v[0])"),
        # the running sum is scaled every row (not associative as written)
        ("igemv_t_gridstride", "s = s + row[j] * vec[i];", "s = s * 2 + row[j] * vec[i];"),
        # the walked pointer is read after the loop (its final value matters)
        ("gemv_t_pointer_walk", "out[j] = total;", "out[j] = total + *a;"),
        # the walk's stride is loaded from memory
        ("gemv_t_pointer_walk", "a += n;", "a += (int)v[0];"),
        # the sum kept in y reads another column's output each row
        ("gemv_t_inplace", "* x[i];", "* x[i] + y[0];"),
    ],
    "WarpTopK": [
        # ties kept the other way (the later column first), checked by running the insertion
        ("topk_rows_while", "while (q > 0 && v[q - 1] < e) {", "while (q > 0 && v[q - 1] <= e) {"),
        ("topk_rows_shift", "while (p > 0 && best[p - 1] < val)", "while (p > 0 && best[p - 1] <= val)"),
        # the second slot not shifted down when a new maximum arrives (drops an entry)
        ("topk_rows_int", "cnt[1] = cnt[0];\n                bin[1] = bin[0];\n", ""),
        # the stored column is not the element's
        ("topk_rows_while", "id[q] = c;", "id[q] = c + 1;"),
        # the row loop ends early on the data
        ("topk_rows_shift", "double val = line[j];", "double val = line[j];\n            if (val > 1e200) break;"),
        # the output reads another slot
        ("topk_rows_int", "top_count[2 * h + s] = cnt[s];", "top_count[2 * h + s] = cnt[1 - s];"),
    ],
    "ParallelScan": [
        # the running value is scaled each step (not a prefix sum)
        ("row_cumsum", "run += x[r * cols + c];", "run = run * 0.9f + x[r * cols + c];"),
        # reads the previous output element (a recurrence through memory)
        ("row_exclusive_scan_int", "total += counts[s * len + k];", "total += counts[s * len + k] + offsets[s * len];"),
        # run by every thread of a large launch without a single-thread guard
        ("array_scan_single", "if (blockIdx.x == 0 && threadIdx.x == 0) {", "if (blockIdx.x == 0) {"),
        # a per-element sum over a window, not a prefix
        ("prefix_per_element", "for (int j = 0; j <= i; ++j)", "for (int j = i / 2; j <= i; ++j)"),
        # the prefix is stored at another element (a reversed scan as written)
        ("prefix_per_element", "totals[i] = sum;", "totals[n - 1 - i] = sum;"),
        # guards: thread 0 of every one of 4 blocks runs the scan; `&&` lets 511 threads run it;
        # block 0's threads all run it
        ("scan_return_guard", "if (tid != 0) return;", "if (threadIdx.x != 0) return;"),
        ("scan_template_while", "if (threadIdx.x != 0 || blockIdx.x != 0) return;",
         "if (threadIdx.x != 0 && blockIdx.x != 0) return;"),
        ("scan_return_guard", "if (tid != 0) return;", "if (blockIdx.x > 0) return;"),
        # running sums: a read ahead of the position (past the end at the last one); an early
        # exit on the data; the running value scaled each step
        ("scan_template_while", "total += src[i];", "total += src[i + 1];"),
        ("scan_return_guard", "acc += counts[i];", "if (counts[i] == 0u) break; acc += counts[i];"),
        ("scan_template_while", "total += src[i];", "total = total * 3u + src[i];"),
        # recurrences: another operator on the previous output (a non-constant factor), a reach
        # of two, a read ahead, a start that is neither the first element nor a constant
        ("scan_recurrence_inclusive", "y[i] = x[i] + y[i - 1];", "y[i] = x[i] + y[i - 1] * x[0];"),
        ("scan_recurrence_inclusive", "y[i] = x[i] + y[i - 1];", "y[i] = x[i] + y[i - 2];"),
        ("scan_recurrence_inclusive", "y[i] = x[i] + y[i - 1];", "y[i] = x[i + 1] + y[i - 1];"),
        ("scan_recurrence_inclusive", "y[0] = x[0];", "y[0] = x[1];"),
        # the early exit is not the empty range (n == 1 writes nothing in the original)
        ("scan_recurrence_exclusive", "if (n <= 0) return;", "if (n <= 1) return;"),
        ("scan_recurrence_exclusive", "out[i] = out[i - 1] + in[i - 1];", "out[i] = out[i - 1] - in[i - 1];"),
        # in place: the previous element doubled (aliasing: reads the output twice), the next one
        ("scan_in_place", "data[k] += data[k - 1];", "data[k] = data[k - 1] + data[k - 1];"),
        ("scan_in_place", "data[k] += data[k - 1];", "data[k] += data[k + 1];"),
        ("scan_in_place", "for (int k = 1; k < len; k += 1)", "for (int k = 1; k < len; k += 2)"),
        # one block in chunks: chunks that overlap; the chunks before include the thread's own;
        # no barrier before the totals are read; a rescan of other values than were totalled;
        # a chunk size rounded down (the tail of the array is never scanned)
        ("chunked_block_scan_int", "int end = min(begin + chunk, n);", "int end = min(begin + chunk + 1, n);"),
        ("chunked_block_scan_int", "for (int t = 0; t < threadIdx.x; ++t)", "for (int t = 0; t < threadIdx.x + 1; ++t)"),
        ("chunked_block_scan_int", "__syncthreads();", ";"),
        ("chunked_block_scan_float", "partial += x[p] * x[p];", "partial += x[p];"),
        ("chunked_block_scan_u64", "n / blockDim.x + (n % blockDim.x != 0)", "n / blockDim.x"),
        ("chunked_block_scan_u64", "totals[t] = mine;", "totals[0] = mine;"),
        # combined totals run on stand-ins: thread 0 scans from the second total (skips one);
        # a race (no barrier between the read and the update); the inclusive total not made
        # exclusive; the loop over the totals stops one short
        ("chunked_serial_totals", "for (int k = 1; k < blockDim.x; ++k)", "for (int k = 2; k < blockDim.x; ++k)"),
        ("chunked_hillis_steele", "long long add = tid >= off ? sums[tid - off] : 0;\n        __syncthreads();",
         "long long add = tid >= off ? sums[tid - off] : 0;"),
        ("chunked_hillis_steele", "long long acc = sums[tid] - mine;", "long long acc = sums[tid];"),
        ("chunked_hillis_steele", "off < blockDim.x; off *= 2", "off < blockDim.x / 2; off *= 2"),
        # one block run on samples: the offset reads the element before a chunk's end; no
        # barriers (threads read chunk ends others write: a race); inclusive offsets; off by one
        ("block_scan_fixup", "offset += out[end];", "offset += out[end - 1];"),
        ("block_scan_fixup", "__syncthreads();", ";"),
        ("block_scan_global_totals", "base[k] = acc;", "base[k] = next;"),
        ("block_scan_fixup", "out[i] += offset;", "out[i] += offset + 1;"),
        # pointer walks: advanced twice per element; read one ahead; advanced on some elements only
        ("walk_scan_countdown", "acc += *in++;", "acc += *in++; in++;"),
        ("walk_scan_end", "s += *p;", "s += p[1];"),
        ("walk_scan_counter", "dst++;", "if (total > 0.5) dst++;"),
        # O(n^2) per element: the sum starts at the thread's own position
        ("prefix_per_element_exclusive", "for (int j = 0; j < t; j++)", "for (int j = t; j < n; j++)"),
    ],
}


@pytest.mark.parametrize("applier,case,old,new", [(a, *m) for a, misses in NEAR_MISSES.items() for m in misses])
def test_near_misses_are_not_rewritten(applier: str, case: str, old: str, new: str) -> None:
    given = _variant(case, old, new)
    for name, other in IDIOM_APPLIERS.items():
        assert other.apply(given) == [], f"{name} rewrote a near-miss of {case}"


def test_a_matrix_product_element_is_not_a_row() -> None:
    source = """__global__ void mm(const float *a, const float *b, float *c, int m, int n, int k) {
        int t = blockIdx.x * blockDim.x + threadIdx.x;
        if (t >= m * n) return;
        int i = t / n, j = t % n;
        float s = 0.f;
        for (int p = 0; p < k; ++p) s += a[i * k + p] * b[j * k + p];
        c[t] = s;
    }"""
    given = ApplierInput(source, "mm", LaunchConfig(("(m * n + 255) / 256",), ("256",)), {}, H200_LIKE)
    assert all(applier.apply(given) == [] for applier in IDIOM_APPLIERS.values())


def test_every_applier_has_three_near_misses() -> None:
    assert set(NEAR_MISSES) == set(IDIOM_APPLIERS) and all(len(m) >= 3 for m in NEAR_MISSES.values())


# ------------------------------------------------------------------------------ nvcc
@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("applier", sorted(IDIOM_APPLIERS))
def test_every_rewrite_compiles(tmp_path: Path, applier: str) -> None:
    """The rewrites of one applier (of a parameter grid: its first four, centre and last corner),
    with and without a device, each as if compiled alone (`compile_together`: the distinct texts
    of the same includes share one nvcc run, a namespace each; with and without a device most
    rewrites are the same text, compiled once). Whole grids of one kernel per applier compile in
    test_structural_grids.py and test_row_column_grids.py."""
    sources, labels = [], []
    for name in CASES:
        expected, given = case_input(name)
        if expected != applier:
            continue
        for device in (H200_LIKE, None):
            rewrites = IDIOM_APPLIERS[applier].apply(ApplierInput(given.source, given.kernel, given.launch,
                                                                  given.constants, device))
            for rewrite in grid_sample(rewrites):
                sources.append(rewrite.source)
                labels.append(f"{name} ({'device' if device else 'no device'}): {rewrite.note}")
    assert len(sources) >= 6
    # ParallelScan's bounded 1024-thread raking scans of 8-byte values spill (unbounded they could
    # not launch: test_scan_launch_bounds.py)
    compile_together(sources, tmp_path, applier, spills_allowed=applier == "ParallelScan", labels=labels)
