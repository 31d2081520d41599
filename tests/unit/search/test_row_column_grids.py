"""The parameter grids of the row, CSR-row and column appliers (issue 12).

Each of GroupPerRow, CsrGroupPerRow and ColumnSplitReduction offers its first choices exactly as
before the grids (tests/data/grids/row_column_first_choices.json holds their notes, launches and
source hashes on every train, red-team and applier-test kernel they match, with and without a
device, as main produced them before the grids, at f655156), then the rest of its grid in lexicographic order of
`Rewrite.params`. Every rewrite carries its coordinates; no two share them or their code. The
grid points of one kernel per applier compile with nvcc (marker `nvcc`), within the registers a
block of their size may use.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from nvcc_check import needs_nvcc

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import ApplierInput, DeviceLimits, rewrites_of
from regrapht.search.appliers.column_reduction import ColumnSplitReduction
from regrapht.search.appliers.common import Applier, Rewrite
from regrapht.search.appliers.csr_rows import CsrGroupPerRow
from regrapht.search.appliers.grid import thread_limit
from regrapht.search.appliers.row_ops import GroupPerRow
from regrapht.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[3]
FIRST_CHOICES = json.loads((ROOT / "tests/data/grids/row_column_first_choices.json").read_text())
APPLIERS: dict[str, Applier] = {a.__class__.__name__: a for a in (GroupPerRow(), CsrGroupPerRow(), ColumnSplitReduction())}
PARAM_NAMES = {
    "GroupPerRow": ("threads_per_row", "rows_per_block"),
    "CsrGroupPerRow": ("threads_per_row", "rows_per_block"),
    "ColumnSplitReduction": ("tile_columns", "columns_per_thread", "threads_per_column"),
}
H200_LIKE = DeviceLimits(132, 2048, 1024, 48 * 1024)
DEVICES = {"H200": H200_LIKE, "none": None}


def case_input(case: str, device: DeviceLimits | None) -> ApplierInput:
    """`case`: a spec path without `.regrapht.toml` (its kernel source beside it, `.cu`)."""
    [kernel] = load_spec(ROOT / f"{case}.regrapht.toml").kernels
    target = kernel_target(kernel)
    return ApplierInput((ROOT / f"{case}.cu").read_text(), kernel.name, target.launch, target.constants, device)


def described(rewrite: Rewrite) -> str:
    source = hashlib.sha256(rewrite.source.encode()).hexdigest()[:16]
    return f"{rewrite.note} | {', '.join(rewrite.launch.grid)} | {', '.join(rewrite.launch.block)} | {source}"


def block_of(rewrite: Rewrite) -> int:
    return int(rewrite.launch.block[0])


@pytest.mark.parametrize("case", sorted(FIRST_CHOICES))
def test_first_choices_unchanged_then_a_grid_of_distinct_coordinates(case: str) -> None:
    expected = FIRST_CHOICES[case]
    name = expected["applier"]
    for label, device in DEVICES.items():
        rewrites = rewrites_of(APPLIERS[name], case_input(case, device))
        first = expected[label]
        assert [described(r) for r in rewrites[: len(first)]] == first, label
        assert len(rewrites) >= 12, (label, len(rewrites))
        # every rewrite tagged with the applier's coordinates, none twice, no code twice
        assert all(tuple(n for n, _ in r.params) == PARAM_NAMES[name] for r in rewrites), label
        assert len({r.params for r in rewrites}) == len(rewrites), label
        assert len({(r.source, r.launch) for r in rewrites}) == len(rewrites), label
        # the rest of the grid in lexicographic order of its coordinates
        rest = [tuple(v for _, v in r.params) for r in rewrites[len(first):]]
        assert rest == sorted(rest), label
        for rewrite in rewrites:
            values = dict(rewrite.params)
            if name == "ColumnSplitReduction":
                width = values["tile_columns"] // values["columns_per_thread"]
                assert width * values["threads_per_column"] == block_of(rewrite)
                assert rewrite.launch.grid[0].endswith(f" / {values['tile_columns']}")
            else:
                assert values["threads_per_row"] * values["rows_per_block"] == block_of(rewrite)
                assert block_of(rewrite) <= 1024


def test_rows_grid_follows_the_row_length() -> None:
    def tried(case: str) -> set[int]:
        return {dict(r.params)["threads_per_row"] for r in GroupPerRow().apply(case_input(case, H200_LIKE))}

    # rows of 13 features: parts of a warp only (4, 8, 16 lanes; 32 is a first choice)
    assert tried("tests/data/appliers/row_mean_short") == {4, 8, 16, 32}
    # rows of 1024: 8-32 lanes and blocks of 128-1024 per row
    assert tried("tests/data/appliers/softmax_rows") == {8, 16, 32, 128, 256, 512, 1024}


def test_csr_grid_spans_lanes_and_blocks() -> None:
    rewrites = CsrGroupPerRow().apply(case_input("tests/data/appliers/spmv_csr", H200_LIKE))
    shapes = {(dict(r.params)["threads_per_row"], block_of(r)) for r in rewrites}
    assert shapes == {(lanes, block) for lanes in (2, 4, 8, 16, 32) for block in (128, 256, 512)}
    assert all("cub::WarpReduce<" in r.source and "__ldg(&" in r.source for r in rewrites)


def test_column_grid_needs_a_shared_row_loop_for_several_columns_per_thread() -> None:
    given = case_input("tests/data/appliers/column_sum", H200_LIKE)
    per_thread = {dict(r.params)["columns_per_thread"] for r in ColumnSplitReduction().apply(given)}
    assert per_thread == {1, 2, 4}
    # a row range that depends on the column (a triangle): one column per thread throughout
    triangle = ApplierInput(given.source.replace("r < rows", "r < c"), given.kernel, given.launch,
                            given.constants, given.device)
    rewrites = ColumnSplitReduction().apply(triangle)
    assert len(rewrites) == 12 and {dict(r.params)["columns_per_thread"] for r in rewrites} == {1}
    # shared memory too small for 4 columns of 1024 threads: those shapes are left out
    small = ApplierInput(given.source, given.kernel, given.launch, given.constants,
                         DeviceLimits(132, 2048, 1024, 8 * 1024))
    assert all(block_of(r) * dict(r.params)["columns_per_thread"] * 4 <= 8 * 1024
               for r in ColumnSplitReduction().apply(small) if dict(r.params)["columns_per_thread"] > 1)


@pytest.mark.parametrize("case", ["tests/data/appliers/softmax_rows", "tests/data/appliers/spmv_csr",
                                  "tests/data/appliers/column_sum"])
def test_grid_blocks_stay_within_the_device(case: str) -> None:
    name = FIRST_CHOICES[case]["applier"]
    first = len(FIRST_CHOICES[case]["H200"])
    given = case_input(case, DeviceLimits(132, 2048, 512, 48 * 1024))
    rewrites = APPLIERS[name].apply(given)
    assert len(rewrites) > first and all(block_of(r) <= 512 for r in rewrites[first:])


@pytest.mark.parametrize("case", ["tests/data/appliers/softmax_rows", "tests/data/appliers/spmv_csr",
                                  "tests/data/appliers/column_sum"])
def test_grid_blocks_stay_within_the_kernels_launch_bounds(case: str) -> None:
    name = FIRST_CHOICES[case]["applier"]
    given = case_input(case, H200_LIKE)
    header = re.search(r"__global__\s+void\s+", given.source)
    assert header is not None

    def bounded(bounds: str) -> ApplierInput:
        return replace(given, source=given.source[: header.start()] + bounds + " " + given.source[header.start():])

    def largest(source: str) -> int:
        return thread_limit(replace(given, source=source))

    assert largest(given.source) == 1024
    assert largest(bounded("__launch_bounds__(256, 2)").source) == 256
    # a bound the applier cannot read: only the original's own block
    assert largest(bounded("__launch_bounds__(THREADS)").source) == int(given.launch.block[0])
    rewrites = APPLIERS[name].apply(bounded("__launch_bounds__(256)"))
    first = len(FIRST_CHOICES[case]["H200"])
    assert len(rewrites) > first and all(block_of(r) <= 256 for r in rewrites[first:])
    assert all("__launch_bounds__(256)" in r.source for r in rewrites)


# One kernel per applier, its whole grid: registers checked against the block (a launch of more
# threads than the SM's 64K registers allow fails).
NVCC_CASES = ["tests/data/appliers/argmax_rows", "tests/data/appliers/dspmv_csr_scaled_template",
              "tests/data/appliers/gemv_t_scaled_template"]


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("case", NVCC_CASES)
def test_every_grid_point_compiles_within_the_registers_of_its_block(tmp_path: Path, case: str) -> None:
    rewrites = APPLIERS[FIRST_CHOICES[case]["applier"]].apply(case_input(case, H200_LIKE))
    assert len(rewrites) >= 12
    parts, blocks = ["#include <cub/cub.cuh>"], {}
    for number, rewrite in enumerate(rewrites):
        parts.append(f"namespace grid{number} {{\n{rewrite.source.replace('#include <cub/cub.cuh>', '')}\n}}")
        blocks[f"grid{number}"] = block_of(rewrite)
    path = tmp_path / "grid.cu"
    path.write_text("\n".join(parts))
    done = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-Xptxas", "-v,--warn-on-spills,--warning-as-error",
                           "-o", str(tmp_path / "out.cubin"), str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    # ptxas -v: "Compiling entry function '_ZN5grid3...'" then "Used N registers"
    used: dict[str, int] = {}
    entry = None
    for line in done.stderr.splitlines():
        if (compiling := re.search(r"Compiling entry function '_ZN(\d+)(grid\d+)", line)) is not None:
            entry = compiling.group(2)[: int(compiling.group(1))]
        elif (registers := re.search(r"Used (\d+) registers", line)) is not None and entry is not None:
            used[entry], entry = int(registers.group(1)), None
    assert set(used) == set(blocks)
    # registers are allocated per thread in steps of 8
    assert all(-(-used[name] // 8) * 8 * blocks[name] <= 64 * 1024 for name in blocks), \
        {n: (used[n], blocks[n]) for n in blocks}
