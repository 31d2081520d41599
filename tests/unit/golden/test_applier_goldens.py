"""Golden before/after cases of the deterministic appliers (`tests/golden/appliers`).

Each case folder holds a kernel (before.cu), how it is launched and which of its applier's
rewrites is golden (case.toml), and that rewrite's whole file (after.cu); a near-miss has no
after.cu and its applier must return no rewrite. The rewrite's text is compared exactly (a
unified diff on failure), and its launch, note, parameter point, place in the list and the
list's length with case.toml. `python tests/golden/update.py` records intended changes
(tests/golden/README.md). The `nvcc` test compiles every before.cu and after.cu for sm_90.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from golden_cases import (
    APPLIER_BY_NAME,
    CaseError,
    case_folders,
    case_id,
    load_case,
    mismatches,
    read_text,
    rewrites_for,
    update_case,
)
from nvcc_check import compile_together

FOLDERS = case_folders()
# The appliers that match by regex alone (issue 24): each has a case it must leave alone.
REGEX_APPLIERS = ("FastMath", "LoopUnrolling", "RestrictPointers", "SharedMemoryPadding", "BlockSizeTuning")


@pytest.mark.parametrize("folder", FOLDERS, ids=case_id)
def test_the_applier_gives_the_golden_rewrite(folder: Path) -> None:
    case = load_case(folder)
    problems = mismatches(case, rewrites_for(case))
    assert not problems, "\n".join(problems) + "\n(an intended change: python tests/golden/update.py " + case.name + ")"


def test_the_cases_cover_every_applier_with_near_misses() -> None:
    cases = [load_case(f) for f in FOLDERS]
    assert len(cases) >= 40
    assert {c.applier for c in cases} == set(APPLIER_BY_NAME), set(APPLIER_BY_NAME) - {c.applier for c in cases}
    near = {c.applier for c in cases if c.expect.rewrites == 0}
    assert set(REGEX_APPLIERS) <= near, set(REGEX_APPLIERS) - near
    assert all(c.why.strip() for c in cases)


def test_every_folder_holds_only_the_case_files() -> None:
    for folder in FOLDERS:
        assert {p.name for p in folder.iterdir()} <= {"before.cu", "after.cu", "case.toml"}, folder


GOOD = """kernel = "scale"
why = "a test case"
device = "none"

[launch]
grid = ["(n + 255) / 256"]
block = ["256"]

[select]
note = "block 256 -> 512"

[expect]
rewrites = 3
index = 0
note = "block 256 -> 512"
params = {}

[expect.launch]
grid = ["(n + 511) / 512"]
block = ["512"]
shared_bytes = "0"
"""

SCALE = """#include <cuda_runtime.h>

__global__ void scale(float *x, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= s;
}
"""


def write_case(root: Path, toml: str, applier: str = "BlockSizeTuning", after: str | None = SCALE) -> Path:
    folder = root / applier / "scale"
    folder.mkdir(parents=True)
    (folder / "before.cu").write_text(SCALE)
    (folder / "case.toml").write_text(toml)
    if after is not None:
        (folder / "after.cu").write_text(after)
    return folder


def test_a_well_formed_case_loads_and_passes(tmp_path: Path) -> None:
    case = load_case(write_case(tmp_path, GOOD))
    assert mismatches(case, rewrites_for(case)) == []


# (what is wrong, the case.toml, the key the message must name)
MALFORMED = [
    ("no kernel", GOOD.replace('kernel = "scale"\n', ""), "kernel"),
    ("unknown device", GOOD.replace('device = "none"', 'device = "a100"'), "device"),
    ("block not a list", GOOD.replace('block = ["256"]\n\n[select]', 'block = "256"\n\n[select]'), "launch.block"),
    ("shared bytes a number", GOOD.replace('block = ["256"]\n\n[select]', 'block = ["256"]\nshared_bytes = 0\n\n[select]'),
     "launch.shared_bytes"),
    ("misspelt key", GOOD.replace('why = "a test case"', 'whY = "a test case"'), "whY"),
    ("selector without params or note", GOOD.replace('note = "block 256 -> 512"\n\n[expect]', 'block = ["512"]\n\n[expect]'),
     "select"),
    ("params not integers", GOOD.replace("params = {}", 'params = { threads = "512" }'), "expect.params.threads"),
    ("index outside the list", GOOD.replace("index = 0", "index = 3"), "expect.index"),
    ("expected note missing", GOOD.replace('rewrites = 3\nindex = 0\nnote = "block 256 -> 512"\n', "rewrites = 3\nindex = 0\n"),
     "expect.note"),
    ("a near-miss expecting a rewrite", GOOD.replace("rewrites = 3", "rewrites = 0"), "expect.index"),
    ("a near-miss with a selector", GOOD[: GOOD.index("[expect]")] + "[expect]\nrewrites = 0\n", "expect.rewrites"),
    ("constants not integers", GOOD.replace("[select]", '[constants]\nbins = "256"\n\n[select]'), "constants.bins"),
    ("not TOML at all", GOOD.replace('kernel = "scale"', 'kernel = "scale'), "not valid TOML"),
]


@pytest.mark.parametrize(("toml", "key"), [(t, k) for _, t, k in MALFORMED], ids=[w for w, _, _ in MALFORMED])
def test_a_malformed_case_names_its_file_and_key(tmp_path: Path, toml: str, key: str) -> None:
    folder = write_case(tmp_path, toml)
    with pytest.raises(CaseError) as raised:
        load_case(folder)
    message = str(raised.value)
    assert str(folder / "case.toml") in message
    assert (f"key '{key}'" if key != "not valid TOML" else key) in message, message


def test_a_case_without_its_after_file_or_applier_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CaseError, match=r"case\.toml: key 'select': .*no after\.cu"):
        load_case(write_case(tmp_path / "a", GOOD, after=None))
    with pytest.raises(CaseError, match="names no applier"):
        load_case(write_case(tmp_path / "b", GOOD, applier="BlockSizeTunning"))


def test_a_selector_that_picks_no_rewrite_is_reported_with_the_list(tmp_path: Path) -> None:
    case = load_case(write_case(tmp_path, GOOD.replace('note = "block 256 -> 512"\n\n[expect]',
                                                       'note = "block 256 -> 96"\n\n[expect]')))
    [problem] = mismatches(case, rewrites_for(case))
    assert "key 'select': matches 0 of the 3 rewrites" in problem and "block 256 -> 128" in problem


def test_a_difference_shows_as_a_unified_diff_and_update_records_it(tmp_path: Path) -> None:
    source = next(f for f in FOLDERS if case_id(f) == "RestrictPointers/saxpy")
    folder = tmp_path / "RestrictPointers" / "saxpy"
    shutil.copytree(source, folder)
    stale = read_text(folder / "after.cu").replace("float *__restrict__ y", "float *y")
    (folder / "after.cu").write_text(stale)
    toml = read_text(folder / "case.toml")
    (folder / "case.toml").write_text(toml.replace("[expect]\nrewrites = 1\n", "[expect]\nrewrites = 2\n"))
    case = load_case(folder)
    problems = mismatches(case, rewrites_for(case))
    assert any("-__global__ void saxpy(int n, float a, const float *__restrict__ x, float *y)" in p and
               "+__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)" in p
               for p in problems), problems
    changed = update_case(case)
    assert changed and all(line.startswith("RestrictPointers/saxpy") for line in changed)
    assert read_text(folder / "after.cu") == read_text(source / "after.cu")
    assert read_text(folder / "case.toml") == toml
    assert mismatches(load_case(folder), rewrites_for(load_case(folder))) == []
    assert update_case(load_case(folder)) == []  # a second run changes nothing


def test_update_fills_in_a_new_case(tmp_path: Path) -> None:
    folder = write_case(tmp_path, GOOD[: GOOD.index("[expect]")], after=None)
    with pytest.raises(CaseError, match=r"key 'expect': missing \(a new case\?"):
        load_case(folder)
    assert update_case(load_case(folder, new=True)) == ["BlockSizeTuning/scale: a new case (no [expect] tables yet)"]
    assert read_text(folder / "case.toml") == GOOD
    assert read_text(folder / "after.cu") == SCALE  # block-size tuning changes only the launch
    assert mismatches(load_case(folder), rewrites_for(load_case(folder))) == []
    near = write_case(tmp_path / "near", GOOD[: GOOD.index("[select]")].replace("scale", "nothing_here", 1), after=None)
    update_case(load_case(near, new=True))  # a kernel the applier cannot find: recorded as a near-miss
    assert read_text(near / "case.toml").endswith("\n\n[expect]\nrewrites = 0\n") and not (near / "after.cu").exists()


def test_update_refuses_a_near_miss_the_applier_now_rewrites(tmp_path: Path) -> None:
    near = GOOD[: GOOD.index("[select]")] + "[expect]\nrewrites = 0\n"
    case = load_case(write_case(tmp_path, near, after=None))
    with pytest.raises(CaseError, match="a near-miss, but the applier now returns 3 rewrite"):
        update_case(case)
    assert "a near-miss" in mismatches(case, rewrites_for(case))[0]


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_every_before_and_after_compiles(tmp_path: Path) -> None:
    """Every applier's files, each as if compiled alone (`compile_together`: files of the same
    includes share one nvcc run, a namespace each; one with C linkage is compiled alone). One
    test for all appliers: nvcc's fixed cost (parsing CUB) is then paid once per include head, not
    once per applier; a failure names the file."""
    files = [folder / name for folder in FOLDERS for name in ("before.cu", "after.cu") if (folder / name).is_file()]
    assert {f.parent.parent.name for f in files} == {f.parent.name for f in FOLDERS}
    compile_together([read_text(f) for f in files], tmp_path, spills_allowed=True,
                     labels=[f"{f.parent.name}/{f.name}" for f in files])
