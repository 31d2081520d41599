"""Predicate searches -> an index min-reduction with early exit (`FirstIndexMin`, docs/techniques/
early_exit_search.md). Three spellings (the corpus train kernels first_negative_f32: a compound
guard; find_key_i32: an early return, a declaration, `&where[0]` and a cast of the index;
first_above_f64: a grid-stride loop with 64-bit index and result) and five near-misses
(tests/data/first_index/). The GPU differential check: tests/gpu/test_gpu_appliers.py (corpus train)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, rewrites_of
from regrapht.search.appliers.first_index import FirstIndexMin
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[3]
TRAIN = ROOT / "bench/corpus/train"
H200 = DeviceLimits(132, 2048, 1024, 48 * 1024)
SPELLINGS = ("first_negative_f32", "find_key_i32", "first_above_f64")
NEAR_MISSES = {"nm_value_min": "smallest_odd", "nm_per_lane": "first_per_class", "nm_last": "last_negative",
               "nm_marks": "first_and_marks", "nm_reads_result": "first_below_answer"}


def given_for(task: str, device: DeviceLimits | None = H200) -> ApplierInput:
    [kernel] = load_spec(TRAIN / task / f"{task}.regrapht.toml").kernels
    target = kernel_target(kernel)
    return ApplierInput((TRAIN / task / f"{task}.cu").read_text(), kernel.name, target.launch, target.constants, device)


@pytest.mark.parametrize("task", SPELLINGS)
def test_each_spelling_becomes_an_early_exit_search(task: str) -> None:
    rewrites = rewrites_of(FirstIndexMin(), given_for(task))
    assert len(rewrites) == 16  # 3 hand-picked points, then the 4 x 4 grid (the 3 among it once)
    first = rewrites[0]
    assert dict(first.params) == {"threads": 256, "items": 4}
    assert "if (rg_stop_) break;" in first.source and "atomicMin(&rg_block_best_, rg_mine_)" in first.source
    assert first.source.count("atomicMin(") == 2  # one shared per warp, one global per block
    assert first.launch.block == ("256",) and first.launch.grid[0].startswith("min(") and "1056" in first.launch.grid[0]
    assert {dict(r.params)["threads"] for r in rewrites} == {128, 256, 512, 1024}


def test_without_a_device_the_grid_is_sized_by_tiles() -> None:
    first = rewrites_of(FirstIndexMin(), given_for("first_negative_f32", None))[0]
    assert first.launch.grid == ("(n + 16383) / 16384",)


def test_the_predicate_and_declarations_are_kept_per_position() -> None:
    source = rewrites_of(FirstIndexMin(), given_for("find_key_i32"))[0].source
    assert "const int idx = (int)rg_pos_;" in source and "const int k = keys[idx];" in source
    assert "if ((k == key)) rg_mine_ = rg_pos_;" in source
    assert "atomicMin(where, (unsigned int)rg_block_best_)" in source


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_misses_are_left_alone(name: str) -> None:
    source = (ROOT / "tests/data/first_index" / f"{name}.cu").read_text()
    given = ApplierInput(source, NEAR_MISSES[name], LaunchConfig(("(n + 255) / 256",), ("256",)), {}, H200)
    assert rewrites_of(FirstIndexMin(), given) == []


def test_a_launch_that_does_not_cover_the_indices_is_refused() -> None:
    given = given_for("first_negative_f32")
    short = ApplierInput(given.source, given.kernel, LaunchConfig(("(n + 511) / 512",), ("256",)), given.constants, H200)
    assert rewrites_of(FirstIndexMin(), short) == []


def test_it_is_registered_before_the_refinements() -> None:
    names = [type(a).__name__ for a in APPLIERS]
    assert names.index("FirstIndexMin") < names.index("GridStrideLoop")


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_the_rewrites_compile(tmp_path: Path) -> None:
    parts = []
    for number, task in enumerate(SPELLINGS):
        rewrites = rewrites_of(FirstIndexMin(), given_for(task))
        for index in (0, 7, len(rewrites) - 1):
            parts.append(f"namespace case{number}_{index} {{\n{rewrites[index].source}\n}}")
    path = tmp_path / "first_index.cu"
    path.write_text("\n".join(parts))
    done = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-Xptxas", "--warn-on-spills,--warning-as-error",
                           "-o", str(tmp_path / "out.cubin"), str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
