"""Per-element prefix loops with an associative operator other than `+` (issue 26): a thread per
output that loops over its own prefix (`for (j = L; j <= i; ++j) m = fminf(m, x[j])`, O(n^2)
loads) becomes one min- or max-scan (`ParallelScan`, the single pass with decoupled look-back,
`lookback.ScanOp`). Three spellings (tests/data/appliers/prefix_{min_f32,max_int,
max_exclusive_f64}.cu: fminf from x[0] with the loop from 1, a comparison from INT_MIN with an
early return, fmax exclusive with 64-bit indices) and four near-misses (tests/data/prefix_scans/:
a trailing window, a contribution that depends on the item, a decaying update, a suffix).
The GPU differential check is tests/gpu/test_gpu_appliers.py (it reads tests/data/appliers)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from nvcc_check import compile_together

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import ApplierInput, DeviceLimits, rewrites_of
from regrapht.search.appliers.lookback import ScanOp
from regrapht.search.appliers.scan import ParallelScan
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests/data/appliers"
H200 = DeviceLimits(132, 2048, 1024, 48 * 1024)
SPELLINGS = {"prefix_min_f32": ("min", False, "fminf"), "prefix_max_int": ("max", False, ""),
             "prefix_max_exclusive_f64": ("max", True, "fmax")}
NEAR_MISSES = {"nm_window": "window_min", "nm_weighted": "weighted_max", "nm_decay": "decayed_max",
               "nm_suffix": "suffix_min"}


def given_for(name: str, device: DeviceLimits | None = H200) -> ApplierInput:
    [kernel] = load_spec(DATA / f"{name}.regrapht.toml").kernels
    target = kernel_target(kernel)
    return ApplierInput((DATA / f"{name}.cu").read_text(), kernel.name, target.launch, target.constants, device)


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_each_spelling_becomes_a_single_pass_scan_with_its_operator(name: str) -> None:
    op, exclusive, combine = SPELLINGS[name]
    rewrites = rewrites_of(ParallelScan(), given_for(name))
    assert rewrites, name
    first = rewrites[0]
    assert f"single-pass {op}-scan" in first.note
    assert ("ExclusiveScan(" if exclusive else "InclusiveScan(") in first.source
    assert "rg_scan_op_" in first.source and "ExclusiveSum" not in first.source and "InclusiveSum" not in first.source
    identity = "infinity()" if name != "prefix_max_int" else "lowest()"
    assert identity in first.source
    if combine:
        assert f"{combine}(rg_prefix_, rg_scanned_[rg_k_])" in first.source
    # the grid is the scan's: block size x items x CUB algorithm, every point bounded
    assert len(rewrites) > 4 and all("__launch_bounds__" in r.source or r is first for r in rewrites)


def test_the_positions_before_the_loop_start_are_written_once() -> None:
    """`m = x[0]; for (j = 1; ...)`: item 0's loop is empty, so it is written from the start value
    by one thread; the scan covers positions from 1, and an empty array returns before reading x[0]."""
    first = rewrites_of(ParallelScan(), given_for("prefix_min_f32"))[0]
    assert "rg_lower_ = (long long)(1)" in first.source
    assert "for (long long rg_q_ = 0; rg_q_ < 1 && rg_q_ < (long long)(n); ++rg_q_)" in first.source
    assert first.source.index("if ((long long)(n) <= 0) return;") < first.source.index("float m = x[0];")
    assert first.launch.grid[0].startswith("min(((n) - (1) + ")


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_misses_are_left_alone(name: str) -> None:
    source = (ROOT / "tests/data/prefix_scans" / f"{name}.cu").read_text()
    given = ApplierInput(source, NEAR_MISSES[name], LaunchConfig(("(n + 255) / 256",), ("256",)), {}, H200)
    assert rewrites_of(ParallelScan(), given) == []


def test_a_sum_plan_is_written_as_before() -> None:
    """The operator is additive: the sum's text does not mention it (the guard of
    bench/applier_hashes.py checks every existing rewrite)."""
    assert ScanOp().apply("a", "b") == "a + b" and ScanOp().identity("float") == "(float)0"
    first = rewrites_of(ParallelScan(), given_for("prefix_per_element"))[0]
    assert "rg_scan_op_" not in first.source and "InclusiveSum" in first.source


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_the_rewrites_compile(tmp_path: Path, name: str) -> None:
    sources, labels = [], []
    for device in (H200, None):
        rewrites = rewrites_of(ParallelScan(), given_for(name, device))
        for index in sorted({0, 1, len(rewrites) // 2, len(rewrites) - 1}):
            sources.append(rewrites[index].source)
            labels.append(f"{name} on {'the H200' if device else 'no device'}, rewrite {index}: {rewrites[index].note}")
    compile_together(sources, tmp_path, name, strict=False, labels=labels)


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_every_lane_reaches_every_shuffle_of_the_look_back(name: str) -> None:
    # A comparison operator (`a < b ? b : a`) names its arguments twice: a __shfl_xor_sync given
    # to it sits on one side of `?:`, reached by some lanes only, and the warp hangs (it did on
    # an H200 for prefix_max_int). No shuffle may be inside a conditional expression.
    import re

    for rewrite in rewrites_of(ParallelScan(), given_for(name)):
        source = rewrite.source
        for line in source.splitlines():
            code = line.split("//", 1)[0]
            if "__shfl" in code:
                assert "?" not in code, line
        assert re.search(r"const \w[\w ]* rg_other_ = __shfl_xor_sync", source), rewrite.note
