"""`regrapht optimize --profile PATH` (docs/cli-contract.md): a saved Nsight Compute profile of the
kernel (`bench --profile --json`'s output, its `profile` object, or the editor's validateKernel
answer) raises the techniques it names; the JSON's `profile` lists the boosts with their reasons
and whether the strategy read them; a file that is not a saved profile of the kernel is exit 2
naming the file, before anything is compiled. The compile-only run uses the real nvcc."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from regrapht.cli import main
from regrapht.search.profile_evidence import profile_boosts
from regrapht.validate.profiler import parse_raw, profile_of

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests/data/profiles"
DGEMV = ROOT / "bench/corpus/train/dgemv_colmajor_ld"
KERNEL = "dgemv_cm_ld"


def saved_profile(tmp_path: Path, shape: str = "bench") -> Path:
    """The fixture profile saved as `bench --profile --json` writes it (or bare, or as validateKernel answers)."""
    parsed = profile_of(KERNEL, parse_raw((DATA / "dgemv_cm_ld.raw.csv").read_text(), "_Z11dgemv_cm_ldiiiPKdS0_Pd"),
                        (DATA / "dgemv_cm_ld.details.txt").read_text())
    data = {"bench": {"kernel": KERNEL, "arch": "sm_90", "profile": parsed.to_json()},
            "bare": parsed.to_json(), "editor": {"profiles": {KERNEL: parsed.to_json()}}}[shape]
    path = tmp_path / f"{shape}.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REGRAPHT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def optimize(*args: str) -> int:
    return main(["optimize", str(DGEMV / "dgemv_colmajor_ld.cu"), "--kernel", KERNEL, "--no-model", *args])


@pytest.mark.parametrize(("content", "says"), [
    ("not json", "the profile is not JSON"),
    (json.dumps({"kernel": "other", "dram_pct": 50}), "the saved profile is of kernel 'other'"),
    (json.dumps({"profile": {"error": "no device"}}), "the saved profile records no measurement: no device"),
    (json.dumps({"kernel": KERNEL, "stalls": "many"}), "[stalls]"),
])
def test_a_file_that_is_not_a_saved_profile_of_the_kernel_is_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, says: str) -> None:
    path = tmp_path / "profile.json"
    path.write_text(content)
    assert optimize("--profile", str(path), "--json") == 2
    err = capsys.readouterr().err
    assert str(path) in err and says in err, err


def test_a_missing_profile_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert optimize("--profile", str(tmp_path / "none.json"), "--json") == 2
    assert "none.json" in capsys.readouterr().err


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("shape", ["bench", "editor"])
def test_the_json_lists_the_boosts_the_profile_gave(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    shape: str) -> None:
    path = saved_profile(tmp_path, shape)
    code = optimize("--profile", str(path), "--strategy", "mcgs", "--budget", "2", "--json")
    out = json.loads(capsys.readouterr().out)
    assert code in (0, 1)  # compile-only here (no device: exit 1), 0 on a GPU host that finds one
    expected = profile_boosts(profile_of(KERNEL, parse_raw((DATA / "dgemv_cm_ld.raw.csv").read_text(), "x"),
                                         (DATA / "dgemv_cm_ld.details.txt").read_text()))
    assert out["profile"] == {**json.loads(json.dumps(expected.to_json())), "applied": True}
    assert [b["technique"] for b in out["profile"]["boosts"]] == ["vectorized_access", "shared_memory_tiling"]
    assert out["kernel"] == KERNEL and "candidates" in out and "best" in out  # the contract's keys stay


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_without_a_profile_the_key_is_null_and_the_summary_names_the_raised_techniques(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert optimize("--strategy", "rules", "--budget", "1", "--json") in (0, 1)
    assert json.loads(capsys.readouterr().out)["profile"] is None
    bare = str(saved_profile(tmp_path, "bare"))
    assert optimize("--strategy", "rules", "--budget", "1", "--profile", bare) in (0, 1)
    assert "profile (memory-bound): names (not read by strategy rules): vectorized_access (+1.9" in capsys.readouterr().out
    assert optimize("--strategy", "greedy", "--budget", "1", "--profile", bare) in (0, 1)
    assert "profile (memory-bound): raised vectorized_access (+1.9" in capsys.readouterr().out
