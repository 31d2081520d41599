"""`regrapht check --grid/--block/--shared-bytes`: an expression that cannot be evaluated with the
kernel's scalars is bad input naming the flag (exit 2), not a candidate that failed (exit 1);
real nvcc compiles the original first, as the command does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from regrapht.cli import main

pytestmark = [pytest.mark.nvcc, pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")]

SAXPY = Path(__file__).resolve().parents[3] / "examples" / "saxpy.cu"


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REGRAPHT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize(("flags", "named", "says"), [
    (["--grid", "(nn + 255) / 256"], "[--grid[0]]", "unknown name 'nn'"),
    (["--block", "256", "8"], "[--block]", "more than 1024 threads"),
    (["--grid", "n +"], "[--grid[0]]", ""),
    (["--shared-bytes", "smem"], "[--shared-bytes]", "unknown name 'smem'"),
])
def test_a_bad_launch_flag_is_bad_input_naming_the_flag(
        flags: list[str], named: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["check", str(SAXPY), str(SAXPY), "--kernel", "saxpy", *flags])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert named in err and says in err


def test_a_good_launch_flag_goes_on_to_the_check(capsys: pytest.CaptureFixture[str]) -> None:
    # Without a GPU the check runs as far as it can: unverified for want of a device is exit 1,
    # with a GPU the original against itself is verified (exit 0); never bad input.
    rc = main(["check", str(SAXPY), str(SAXPY), "--kernel", "saxpy", "--grid", "(n + 127) / 128",
               "--block", "128"])
    assert rc in (0, 1), capsys.readouterr().err
