"""ParallelScan's grid points declare `__launch_bounds__(their block)`: unbounded, the raking
`cub::BlockScan` tiles of 8-byte values at 1024 threads took 80-96 registers a thread (nvcc 13,
sm_90), more than the 64 a 1024-thread block can have (65536 per block), and could not launch
(the H200 suite at 0b8bf6c: "cannot launch: registers"). The nvcc test reads ptxas's register
counts for every 1024-thread point of the 64-bit kernels where that happened."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from nvcc_check import needs_nvcc

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import ApplierInput, DeviceLimits, Rewrite, rewrites_of
from regrapht.search.appliers.grid import grid_order
from regrapht.search.appliers.scan import ParallelScan
from regrapht.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[3]
H200_LIKE = DeviceLimits(132, 2048, 1024, 48 * 1024)
REGISTERS_PER_BLOCK = 65536  # every GPU since compute capability 5.0
GRANULE = 8  # registers per thread are allocated in multiples of 8 (256 per warp) on sm_90
# 8-byte scans whose 1024-thread raking points crashed on the H200 (spec paths without suffix)
WIDE_SCANS = (
    "bench/corpus/train/scan_template_i64/scan_template_i64",
    "bench/corpus/train/scan_exclusive_recurrence_f64/scan_exclusive_recurrence_f64",
    *(f"tests/data/appliers/{name}" for name in (
        "chunked_block_scan_u64", "prefix_per_element_exclusive", "array_scan_double", "scan_recurrence_exclusive",
        "chunked_hillis_steele", "walk_scan_counter", "scan_recurrence_inclusive")),
    "tests/data/redteam/scan/do_while_long_long",
)


def _rewrites(case: str) -> list[Rewrite]:
    source = (ROOT / f"{case}.cu").read_text()
    [kernel] = load_spec(ROOT / f"{case}.regrapht.toml").kernels
    target = kernel_target(kernel)
    return rewrites_of(ParallelScan(), ApplierInput(source, kernel.name, target.launch, target.constants, H200_LIKE))


@pytest.mark.parametrize("case", WIDE_SCANS)
def test_grid_points_declare_their_block_and_first_variants_are_kept(case: str) -> None:
    rewrites = _rewrites(case)
    first = [r for r in rewrites if "__launch_bounds__" not in r.source]
    assert first and rewrites[: len(first)] == first  # the first variants, as they were
    for rewrite in rewrites[len(first):]:
        assert f"__launch_bounds__({rewrite.launch.block[0]})" in rewrite.source, rewrite.note
    assert any(r.launch.block == ("1024",) for r in rewrites[len(first):])


def test_a_kernels_own_bound_is_kept() -> None:
    case = "tests/data/appliers/array_scan_double"
    source = (ROOT / f"{case}.cu").read_text()
    [kernel] = load_spec(ROOT / f"{case}.regrapht.toml").kernels
    bounded = re.sub(r"__global__", "__global__ __launch_bounds__(512)", source, count=1)
    target = kernel_target(kernel)
    rewrites = rewrites_of(ParallelScan(), ApplierInput(bounded, kernel.name, target.launch, target.constants,
                                                         H200_LIKE))
    assert len(rewrites) > 1
    for rewrite in rewrites:
        assert rewrite.source.count("__launch_bounds__") == 1 and "__launch_bounds__(512)" in rewrite.source
        assert int(rewrite.launch.block[0]) <= 512


def test_bounds_do_not_make_duplicates_of_the_first_variants() -> None:
    rewrites = _rewrites("tests/data/appliers/array_scan_double")
    coordinates = [(r.params, r.launch.block) for r in rewrites]
    assert len(set(coordinates)) == len(coordinates)
    assert len(rewrites) == len(grid_order([], [r for r in rewrites]))


@pytest.mark.nvcc
@needs_nvcc
def test_every_1024_thread_point_of_the_wide_scans_fits_its_block(tmp_path: Path) -> None:
    """One translation unit (a namespace per point), ptxas's register counts per kernel."""
    parts, blocks = [], {}
    for case in WIDE_SCANS:
        for rewrite in _rewrites(case):
            if rewrite.launch.block != ("1024",):
                continue
            body = "\n".join(line for line in rewrite.source.splitlines() if not line.lstrip().startswith("#include"))
            blocks[f"v{len(parts)}"] = (case.rsplit("/", 1)[1], rewrite.note, 1024)
            parts.append(f"namespace v{len(parts)} {{\n{body}\n}}")
    assert len(parts) >= 40
    path = tmp_path / "wide.cu"
    path.write_text("#include <cub/cub.cuh>\n" + "\n".join(parts))
    done = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o", str(tmp_path / "wide.cubin"),
                           str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    registers: dict[str, int] = {}
    current = None
    for line in done.stderr.splitlines():
        entry = re.search(r"Compiling entry function '_ZN(\d+)", line)
        if entry:  # the namespace: its length, then its name (v12 in _ZN3v12...)
            current = line[entry.end():entry.end() + int(entry.group(1))]
        used = re.search(r"Used (\d+) registers", line)
        if used and current is not None:
            registers[current] = int(used.group(1))
    registers.pop("cub", None)  # CUB's own kernels
    assert set(registers) == set(blocks)
    too_many = [(blocks[v], n) for v, n in registers.items()
                if -(-n // GRANULE) * GRANULE * blocks[v][2] > REGISTERS_PER_BLOCK]
    assert not too_many, too_many
