"""What the GPU applier tests share: which of an applier's rewrites they check, and one JSON line
per checked rewrite (printed, and appended to the file REGRAPHT_APPLIER_RESULTS names when it is
set: what a lead reads after a device run).

With the parameter grids an applier offers 4-45 rewrites of a kernel; checking all of them on
every test kernel took several device calls. So tests/gpu/test_structural_grids_gpu.py checks
whole grids on a fixed set of kernels (`WHOLE_GRIDS`: chosen so that every grid point, as
`Rewrite.params`, of every applier with a grid runs on some kernel), and the other GPU applier
tests check a sample of the rest (`gpu_sample`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from nvcc_check import grid_sample

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]

# kernel (its spec, relative to the repository, without `.regrapht.toml`) -> the applier whose
# whole grid tests/gpu/test_structural_grids_gpu.py checks on it, and that grid's points on an
# H200. Found by a greedy cover of every applier's grid points over the train, red-team and
# applier-test kernels (train kernels first; 2026-12-01, main at 9c2912b).
WHOLE_GRIDS: dict[str, tuple[str, int]] = {
    "bench/corpus/train/float_sum_atomic/float_sum_atomic": ("BlockReduceAtomic", 32),
    "bench/corpus/train/first_negative_f32/first_negative_f32": ("FirstIndexMin", 16),
    "bench/corpus/train/global_argmax/global_argmax": ("BlockReduceAtomic", 32),
    "tests/data/appliers/single_thread_norm": ("BlockReduceAtomic", 4),
    "bench/corpus/train/hist_unit_floats/hist_unit_floats": ("PrivatisedHistogram", 29),
    "tests/data/redteam/histogram/hist_bytes_gridstride": ("PrivatisedHistogram", 23),
    "bench/corpus/train/embedding_gather/embedding_gather": ("VectorizedMap", 5),
    "bench/corpus/train/array_exclusive_f64/array_exclusive_f64": ("ParallelScan", 15),
    "bench/corpus/train/row_exclusive_int/row_exclusive_int": ("ParallelScan", 13),
    "bench/corpus/train/scan_chunks_f32/scan_chunks_f32": ("ParallelScan", 15),
    "bench/corpus/train/gather_rows_walk/gather_rows_walk": ("GroupPerRow", 16),
    "tests/data/appliers/row_mean_short": ("GroupPerRow", 13),
    "bench/corpus/train/spmv_csr_f64/spmv_csr_f64": ("CsrGroupPerRow", 15),
    "bench/corpus/train/col_max_int/col_max_int": ("ColumnSplitReduction", 31),
    "bench/corpus/train/depthwise3x3_nhwc/depthwise3x3_nhwc": ("HaloTiledStencil", 30),
    "bench/corpus/train/conv5x5_zero_pad/conv5x5_zero_pad": ("HaloTiledStencil", 27),
    "bench/corpus/train/stencil1d_5pt_const/stencil1d_5pt_const": ("HaloTiledStencil", 15),
    "bench/corpus/train/depthwise3x3_nchw_batched/depthwise3x3_nchw_batched": ("RegisterColumnStencil", 28),
    "bench/corpus/train/permute3d_021/permute3d_021": ("TiledPermutation", 13),
    "bench/corpus/train/bmm_fixed16/bmm_fixed16": ("BatchedSmallMatmul", 22),
    "tests/data/redteam/batched_gemm/bmm_flat_divmod": ("MatmulTiling", 25),
    "bench/corpus/train/gemm_nt/gemm_nt": ("MatmulTiling", 21),
    "bench/corpus/train/conv3x3_multichannel/conv3x3_multichannel": ("JammedOutputs", 4),
}


def checked_whole(spec: Path, applier: str) -> bool:
    """Whether test_structural_grids_gpu.py checks `applier`'s whole grid on `spec`'s kernel."""
    key = str(spec.relative_to(ROOT)).removesuffix(".regrapht.toml")
    return WHOLE_GRIDS.get(key, ("", 0))[0] == applier


def gpu_sample(rewrites: list[T]) -> list[T]:
    """The rewrites a GPU test checks of one applier on one kernel: its first two (what the
    search judges first) and its grid's middle and last point (`nvcc_check.grid_sample`). A kernel costs ~5 s of device time (the original compiled,
    run and timed) and each rewrite 0.2-0.9 s more (2026-11-30 suite logs)."""
    return grid_sample(rewrites, first=2)


def report_result(line: Mapping[str, object]) -> None:
    text = json.dumps(line)
    print(text)
    path = os.environ.get("REGRAPHT_APPLIER_RESULTS")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(text + "\n")
