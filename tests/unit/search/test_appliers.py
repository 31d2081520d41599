"""Deterministic appliers: textual expectations, preconditions, and nvcc compile-only checks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from nvcc_check import compile_together

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, appliers_for
from regrapht.search.appliers.full_reduction import BlockReduceAtomic
from regrapht.search.appliers.histogram import PrivatisedHistogram
from regrapht.search.appliers.launch import BlockSizeTuning, GridStrideLoop
from regrapht.search.appliers.matmul import MatmulTiling
from regrapht.search.appliers.qualifiers import RestrictPointers
from regrapht.search.appliers.row_ops import GroupPerRow
from regrapht.search.appliers.vectorize import VectorizedMap
from regrapht.search.source import find_kernel, signature_key
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[3]
SPECS = sorted([*ROOT.glob("examples/*.regrapht.toml"), *ROOT.glob("bench/tasks/*/*.regrapht.toml")])


def inputs_of(spec_path: Path) -> list[tuple[str, ApplierInput]]:
    source = spec_path.with_name(spec_path.name.removesuffix(".regrapht.toml") + ".cu").read_text()
    out = []
    for kernel in load_spec(spec_path).kernels:
        target = kernel_target(kernel)
        out.append((kernel.name, ApplierInput(source, kernel.name, target.launch, target.constants)))
    return out


SAXPY = (ROOT / "examples/saxpy.cu").read_text()
SAXPY_IN = ApplierInput(SAXPY, "saxpy", LaunchConfig(("(n + 99) / 100",), ("100",)))


def test_block_size_rewrites_grid_consistently() -> None:
    rewrites = BlockSizeTuning().apply(SAXPY_IN)
    launches = [(r.launch.grid, r.launch.block) for r in rewrites]
    assert (("(n + 255) / 256",), ("256",)) in launches
    assert (("(n + 1023) / 1024",), ("1024",)) in launches
    assert all(r.source == SAXPY for r in rewrites)


def test_block_size_refuses_grid_not_matching_the_block() -> None:
    bad = ApplierInput(SAXPY, "saxpy", LaunchConfig(("4096",), ("100",)))
    assert BlockSizeTuning().apply(bad) == []


def test_block_size_refuses_kernels_with_hard_coded_block_size() -> None:
    source = (ROOT / "examples/transpose.cu").read_text()
    given = ApplierInput(source, "transpose_tiled", LaunchConfig(("(cols + 31) / 32", "(rows + 31) / 32"), ("32", "32")))
    assert BlockSizeTuning().apply(given) == []


def test_restrict_keeps_the_abi_signature() -> None:
    [rewrite] = RestrictPointers().apply(SAXPY_IN)
    assert "float *__restrict__ x" in rewrite.source
    before, after = find_kernel(SAXPY, "saxpy"), find_kernel(rewrite.source, "saxpy")
    assert before is not None and after is not None
    assert signature_key(before) == signature_key(after)


def test_vectorize_has_scalar_tail_and_alignment_check() -> None:
    rewrites = VectorizedMap().apply(SAXPY_IN)
    assert rewrites
    text = rewrites[0].source
    assert "struct __align__(4 * sizeof(float))" in text and "% sizeof(vec_float_rg)) == 0" in text
    assert "if (i < n) {" in text  # the point-by-point tail
    assert rewrites[0].launch.grid == ("(n + 399) / 400",)


def test_grid_stride_grid_fills_the_device_it_is_given() -> None:
    device = DeviceLimits(sms=78, max_threads_per_sm=1536, max_threads_per_block=1024, shared_bytes_per_block=49152)
    rewrites = GridStrideLoop().apply(ApplierInput(SAXPY_IN.source, "saxpy", SAXPY_IN.launch, {}, device))
    assert [r.launch.grid for r in rewrites] == [("min((n + 99) / 100, 1170)",), ("min((n + 255) / 256, 468)",)]
    assert "gridDim.x" in rewrites[-1].source
    # without a device the grid follows the problem: 8 points per thread
    assert GridStrideLoop().apply(SAXPY_IN)[-1].launch.grid == ("(n + 2047) / 2048",)


def test_matmul_tiling_matches_the_naive_kernel_only() -> None:
    [(_, given)] = inputs_of(ROOT / "bench/tasks/sgemm/sgemm.regrapht.toml")
    rewrites = MatmulTiling().apply(given)
    assert [r.launch.grid for r in rewrites][0] == ("(N + 127) / 128", "(M + 127) / 128")
    assert "__shared__ __align__(16) float As" in rewrites[0].source
    assert len(rewrites) == 21 and "float4" in rewrites[0].source  # 5 hand-picked tilings, then the grid
    assert MatmulTiling().apply(SAXPY_IN) == []


def test_reductions() -> None:
    [(_, full)] = inputs_of(ROOT / "bench/tasks/full_sum/full_sum.regrapht.toml")
    rewrites = BlockReduceAtomic().apply(full)[:2]  # the first choices (then its grid)
    assert len(rewrites) == 2 and "float4" in rewrites[0].source and "float4" not in rewrites[-1].source
    for rewrite in rewrites:
        assert "cub::BlockReduce" in rewrite.source and rewrite.source.count("atomicAdd(total") == 1
    # Launches come from the device: its resident blocks cap the grid.
    on_device = ApplierInput(full.source, full.kernel, full.launch, full.constants,
                             DeviceLimits(sms=100, max_threads_per_sm=2048, max_threads_per_block=1024,
                                          shared_bytes_per_block=48 * 1024))
    assert BlockReduceAtomic().apply(on_device)[0].launch.grid == ("min((n + 1023) / 1024, 800)",)
    [(_, rows)] = inputs_of(ROOT / "bench/tasks/row_sum/row_sum.regrapht.toml")
    row_rewrites = GroupPerRow().apply(rows)
    assert [r.launch.grid for r in row_rewrites][:3] == [("rows",), ("rows",), ("(rows + 7) / 8",)]  # then its grid
    assert GroupPerRow().apply(full) == [] and BlockReduceAtomic().apply(rows) == []


def test_reductions_refuse_a_grid_that_covers_only_part_of_the_input() -> None:
    [(_, full)] = inputs_of(ROOT / "bench/tasks/full_sum/full_sum.regrapht.toml")
    partial = ApplierInput(full.source, full.kernel, LaunchConfig(("(n + 511) / 512",), ("256",)))
    assert BlockReduceAtomic().apply(partial) == []
    [(_, rows)] = inputs_of(ROOT / "bench/tasks/row_sum/row_sum.regrapht.toml")
    two_d = ApplierInput(rows.source, rows.kernel, LaunchConfig(("(rows + 255) / 256", "2"), ("256",)))
    assert GroupPerRow().apply(two_d) == []


def test_byte_histogram_is_vectorized_per_warp() -> None:
    [(_, given)] = inputs_of(ROOT / "bench/tasks/histogram/histogram.regrapht.toml")
    rewrites = PrivatisedHistogram().apply(given)
    first = rewrites[0]
    assert "uint4" in first.source and "warp_bins_rg[8][256]" in first.source and "& 15) == 0" in first.source
    # Without a device the grid follows the problem; with one, it fills the device once.
    assert first.launch == LaunchConfig(("(n + 65535) / 65536",), ("256",), "0")
    h200_like = DeviceLimits(sms=132, max_threads_per_sm=2048, max_threads_per_block=1024,
                             shared_bytes_per_block=48 * 1024)
    on_device = PrivatisedHistogram().apply(ApplierInput(given.source, given.kernel, given.launch, given.constants,
                                                         h200_like))
    assert on_device[0].launch.grid == ("min((n + 4095) / 4096, 1056)",)
    assert "warp_bins_rg[32][256]" in rewrites[2].source and rewrites[2].launch.block == ("1024",)
    assert any("private histogram (256 bins)" in r.note for r in rewrites)
    # A 2-D block counts each byte twice in the original: not the shape the rewrite reproduces.
    doubled = ApplierInput(given.source, given.kernel, LaunchConfig(("(n + 255) / 256",), ("256", "2")))
    assert PrivatisedHistogram().apply(doubled) == []


def test_techniques_are_graph_vertex_names() -> None:
    assert appliers_for("register_blocking") == appliers_for("shared_memory_tiling")[:2]  # the two GEMM tilings
    assert {t for a in APPLIERS for t in (a.technique, *a.also)} >= {"launch_configuration", "restrict_const", "loop_unrolling",
                                               "fast_math", "bank_conflict_padding", "grid_stride_loop",
                                               "vectorized_access", "warp_shuffle_reduction",
                                               "shared_memory_privatization", "memory_coalescing"}


CASES = [(spec, name, given) for spec in SPECS for name, given in inputs_of(spec)]


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("spec,name,given", CASES, ids=[f"{s.stem}:{n}" for s, n, _ in CASES])
def test_every_rewrite_compiles(tmp_path: Path, spec: Path, name: str, given: ApplierInput) -> None:
    """Every distinct rewrite compiles as if alone (`compile_together`: those of the same includes
    share one nvcc run, a namespace each). A register spill in a rewrite would cost more than the
    rewrite gains: fail on it."""
    sources = sorted({r.source for applier in APPLIERS for r in applier.apply(given)})
    assert sources, name
    compile_together(sources, tmp_path, "rewrites")


def test_device_limits_come_from_the_worker_description() -> None:
    assert DeviceLimits.of(None) is None and DeviceLimits.of({"name": "x"}) is None
    limits = DeviceLimits.of({"name": "GPU", "sms": 66, "max_threads_per_sm": 1536, "max_threads_per_block": 1024,
                              "max_shared_per_block": 49152})
    assert limits == DeviceLimits(66, 1536, 1024, 49152) and limits.resident_blocks(256) == 396
    older = DeviceLimits.of({"sms": 10})  # a worker that reports only the SM count
    assert older is not None and older.resident_blocks(1024) == 10


def test_kernel_target_fixes_what_the_odd_size_check_cannot_change() -> None:
    spec = parse_spec("""
[[kernel]]
name = "hist"
grid = ["(n + 255) / 256"]
block = [256]
[[kernel.arg]]
name = "x"
type = "const float*"
count = "n"
init = "uniform(0, 1)"
[[kernel.arg]]
name = "bins"
type = "int*"
count = "nb"
init = "zeros"
[[kernel.arg]]
name = "n"
type = "int"
value = "1 << 20"
[[kernel.arg]]
name = "nb"
type = "int"
value = "64"
""", file="hist.regrapht.toml")
    constants = kernel_target(spec.kernels[0]).constants
    assert constants == {"bins": 64, "nb": 64}  # n (the size scalar) and x's count are left out
