"""The commands that compile take the project's flags (real nvcc): `bench`, `check` and
`analyze --confirm` compile a kernel that includes a project header with the CMake project's
compile_commands.json (found beside it, or named by --compile-commands), or with -I/-D, and fail
clearly without them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from regrapht.cli import main

pytestmark = [pytest.mark.nvcc, pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")]

PROJECT = Path(__file__).resolve().parents[2] / "data" / "cmake_project"
SOURCE = PROJECT / "src" / "scale.cu"


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REGRAPHT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def bare_copy(tmp_path: Path) -> Path:
    """The project's sources without its build/ folder: no database to find."""
    copy = tmp_path / "bare"
    shutil.copytree(PROJECT, copy, ignore=shutil.ignore_patterns("build"))
    return copy / "src" / "scale.cu"


def test_bench_uses_the_database_beside_the_project(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", str(SOURCE), "--kernel", "scale", "--no-run", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kernel"] == "scale" and report["resources"]["registers"] > 0
    assert main(["bench", str(SOURCE), "--kernel", "scale", "--no-run"]) == 0
    assert "compiled with -I" in capsys.readouterr().out


def test_bench_without_the_database_fails_clearly_and_flags_fix_it(
        bare_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", str(bare_copy), "--kernel", "scale", "--no-run"]) == 1
    err = capsys.readouterr().err
    assert "the original does not compile" in err and "proj/scale.cuh" in err and "compile_commands.json" in err
    include = str(bare_copy.parents[1] / "include")
    assert main(["bench", str(bare_copy), "--kernel", "scale", "--no-run", "-I", include]) == 1
    assert "PROJ_SCALE is not defined" in capsys.readouterr().err  # the header's own #error
    assert main(["bench", str(bare_copy), "--kernel", "scale", "--no-run", "-I", include,
                 "-D", "PROJ_SCALE=3.0f"]) == 0
    named = PROJECT / "build" / "compile_commands.json"
    assert main(["bench", str(bare_copy), "--kernel", "scale", "--no-run", "--compile-commands", str(named)]) == 0
    assert "is not in" in capsys.readouterr().err  # the neighbour's flags, said once


def test_a_malformed_database_is_a_warning_and_the_command_carries_on(
        bare_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = bare_copy.parents[1] / "compile_commands.json"
    bad.write_text("[{", encoding="utf-8")
    include = str(bare_copy.parents[1] / "include")
    assert main(["bench", str(bare_copy), "--kernel", "scale", "--no-run", "-I", include,
                 "-D", "PROJ_SCALE=1.0f"]) == 0
    assert f"{bad}:1: not JSON" in capsys.readouterr().err


def test_check_compiles_original_and_candidate_with_the_flags(
        bare_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # without a device the candidate is compiled and checked for nothing more: "unverified"
    assert main(["check", str(SOURCE), str(SOURCE), "--kernel", "scale", "--json"]) in (0, 1)  # 1: no device
    data = json.loads(capsys.readouterr().out)
    assert data["outcome"] in ("unverified", "verified", "correct") or data["verified"]
    assert "compile" not in (data["reason"] or "")
    assert main(["check", str(bare_copy), str(bare_copy), "--kernel", "scale"]) == 2
    assert "proj/scale.cuh" in capsys.readouterr().err


def test_analyze_confirm_compiles_with_the_database(bare_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "--confirm", str(SOURCE)]) == 0
    assert "could not compile" not in capsys.readouterr().err
    assert main(["analyze", "--confirm", str(bare_copy)]) == 0
    assert "nvcc could not compile the file" in capsys.readouterr().err


def test_optimize_compiles_the_original_and_its_candidates_with_the_database(
        bare_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--kernel", "scale", "--strategy", "rules", "--budget", "3", "--no-model", "--json"]
    code = main(["optimize", str(SOURCE), *args])
    result = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and result["kernel"] == "scale"
    if result["gpu"] is None:  # without a device: compiled, not verified
        assert "candidates were compiled" in result["reason"], result["reason"]
    assert main(["optimize", str(bare_copy), *args]) == 2
    assert "the original does not compile" in capsys.readouterr().err
