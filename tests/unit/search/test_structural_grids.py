"""The parameter grids of the structural appliers BlockReduceAtomic, PrivatisedHistogram,
VectorizedMap and ParallelScan (issue 12): on every train and red-team kernel they match, the
variants offered before the grid come first and unchanged (hashes of main's output before the
grids, tests/data/grids/structural_first_variants.json), every rewrite carries its coordinates,
no two rewrites share a source and launch or coordinates and block, and the rest of the grid
follows in lexicographic order. nvcc compiles whole grids (one translation unit per kernel)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from nvcc_check import compile_together, needs_nvcc

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import ApplierInput, DeviceLimits, Rewrite, rewrites_of
from regrapht.search.appliers.common import Applier
from regrapht.search.appliers.full_reduction import BlockReduceAtomic
from regrapht.search.appliers.grid import thread_limit
from regrapht.search.appliers.histogram import PrivatisedHistogram
from regrapht.search.appliers.scan import ParallelScan
from regrapht.search.appliers.vectorize import VectorizedMap
from regrapht.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[3]
FIRST = json.loads((ROOT / "tests/data/grids/structural_first_variants.json").read_text())
APPLIERS: dict[str, Applier] = {a.__class__.__name__: a for a in (BlockReduceAtomic(), PrivatisedHistogram(),
                                                                   VectorizedMap(), ParallelScan())}
H200_LIKE = DeviceLimits(132, 2048, 1024, 48 * 1024)


def _spec_path(case: str) -> Path:
    split, rest = case.split("/", 1)
    if split == "train":
        return ROOT / "bench/corpus/train" / rest / f"{rest}.regrapht.toml"
    return ROOT / "tests/data/redteam" / f"{rest}.regrapht.toml"


def _rewrites(key: str) -> list[Rewrite]:
    case, kernel_name, applier, device = key.split(":")
    spec = _spec_path(case)
    source = spec.with_name(spec.name.removesuffix(".regrapht.toml") + ".cu").read_text()
    [kernel] = [k for k in load_spec(spec).kernels if k.name == kernel_name]
    target = kernel_target(kernel)
    given = ApplierInput(source, kernel.name, target.launch, target.constants, H200_LIKE if device == "dev" else None)
    return rewrites_of(APPLIERS[applier], given)


def _digest(rewrite: Rewrite) -> str:
    record = [rewrite.source, list(rewrite.launch.grid), list(rewrite.launch.block), rewrite.launch.shared_bytes,
              rewrite.note]
    return hashlib.sha256(json.dumps(record).encode()).hexdigest()[:16]


@pytest.mark.parametrize("key", sorted(FIRST))
def test_first_variants_unchanged_then_a_grid_of_distinct_points(key: str) -> None:
    rewrites = _rewrites(key)
    first = FIRST[key]
    assert [_digest(r) for r in rewrites[: len(first)]] == first
    assert all(r.params for r in rewrites), [r.note for r in rewrites if not r.params]
    assert all(name not in ("block_x", "block_y") for r in rewrites for name, _ in r.params)
    assert len({(r.source, r.launch) for r in rewrites}) == len(rewrites)
    assert len({(r.params, r.launch.block) for r in rewrites}) == len(rewrites)
    rest = [(tuple(v for _, v in r.params), tuple(int(b) for b in r.launch.block)) for r in rewrites[len(first):]]
    assert rest == sorted(rest)
    assert len(rewrites) <= 40


def test_grids_are_offered_on_the_train_kernels() -> None:
    sizes = {key: len(_rewrites(key)) for key in FIRST if key.startswith("train/") and key.endswith(":dev")}
    by_applier: dict[str, int] = {}
    for key, size in sizes.items():
        applier = key.split(":")[2]
        by_applier[applier] = max(by_applier.get(applier, 0), size)
    assert all(size >= 12 for size in by_applier.values()), by_applier


# one kernel per applier (and element size): every grid point in one translation unit
COMPILED = (
    "train/float_sum_atomic:sum_all:BlockReduceAtomic:dev",
    "redteam/reduction/sum_single_thread_do_while:serial_sum:BlockReduceAtomic:dev",
    "train/hist_unit_floats:histogram_unit_interval:PrivatisedHistogram:dev",
    "train/axpby_int:axpby_int:VectorizedMap:dev",
    "train/softplus_f64:softplus:VectorizedMap:dev",
    "train/scan_inplace_f32:cumsum_in_place:ParallelScan:dev",
    "train/array_exclusive_f64:exclusive_scan_f64:ParallelScan:dev",
    "train/row_exclusive_int:exclusive_scan_rows:ParallelScan:dev",
)


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("key", COMPILED)
def test_whole_grids_compile(key: str, tmp_path: Path) -> None:
    # ParallelScan's bounded 1024-thread raking scans of 8-byte values spill (they could not
    # launch unbounded: test_scan_launch_bounds.py)
    compile_together([r.source for r in _rewrites(key)], tmp_path, spills_allowed=key.endswith("ParallelScan:dev"))


def test_grids_keep_within_the_kernels_launch_bounds() -> None:
    """A body rewrite keeps the kernel's `__launch_bounds__`: no grid point may launch more threads
    (`grid.thread_limit`; the recognisers of these four appliers do not read such kernels yet)."""
    from regrapht.spec.launch import LaunchConfig

    source = """
__global__ void __launch_bounds__(256, 2) sum_all(const float *x, float *total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, x[i]);
}
"""
    launch = LaunchConfig(("(n + 127) / 128",), ("128",))
    assert thread_limit(ApplierInput(source, "sum_all", launch, {}, H200_LIKE)) == 256
    assert thread_limit(ApplierInput(source.replace("256, 2", "BOUND"), "sum_all", launch, {}, H200_LIKE)) == 128
    assert thread_limit(ApplierInput(source.replace("__launch_bounds__(256, 2) ", ""), "sum_all", launch, {},
                                     DeviceLimits(10, 1024, 512, 48 * 1024))) == 512
