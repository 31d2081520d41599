"""Every file the CLI reads is read with a bound: `/dev/zero`, a huge file or a directory is a
one-line exit-2 error naming the file, in well under a second of reading, never a `MemoryError`
after gigabytes; `spec infer -o` into a directory or a missing folder is a clear error too."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from regrapht.cli import main
from regrapht.errors import InputError
from regrapht.inputs import MAX_SOURCE_BYTES, MAX_SPEC_BYTES, read_bytes_bounded, read_text_bounded

KERNEL = """__global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}
void launch(float* x, int n) { scale<<<(n + 255) / 256, 256>>>(x, n); }
"""
ZERO = "/dev/zero"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "scale.cu"
    path.write_text(KERNEL, encoding="utf-8")
    return path


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    started = time.perf_counter()
    code = main(argv)
    assert time.perf_counter() - started < 30
    return code, capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["analyze", ZERO],
    ["spec", "infer", ZERO, "--kernel", "scale"],
    ["spec", "check", ZERO],
    ["bench", ZERO, "--kernel", "scale", "--no-run"],
    ["optimize", ZERO, "--kernel", "scale"],
    ["graph", "stats", "--graph", ZERO],
    ["graph", "show", "--graph", ZERO, "coalescing"],
    ["graph", "build", ZERO, "-o", "/nonexistent/out.msgpack"],
], ids=lambda argv: " ".join(argv[:2]))
def test_endless_file_is_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(argv, capsys)
    assert code == 2 and err.startswith(f"regrapht: error: {ZERO}: ") and "larger than the limit" in err
    assert err.count("\n") == 1


def test_check_endless_candidate(source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["check", str(source), ZERO, "--kernel", "scale"], capsys)
    assert code == 2 and f"{ZERO}: source file is larger than the limit" in err


@pytest.mark.parametrize("argv", [
    ["analyze", "{dir}"], ["spec", "check", "{dir}"], ["spec", "infer", "{dir}", "--kernel", "scale"],
    ["graph", "stats", "--graph", "{dir}"],
])
def test_directory_is_refused(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli([a.format(dir=tmp_path) for a in argv], capsys)
    assert code == 2 and f"{tmp_path}: " in err and "directory" in err


def test_file_just_over_the_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = tmp_path / "big.cu"
    with big.open("wb") as handle:  # sparse: costs no disk
        handle.truncate(MAX_SOURCE_BYTES + 1)
    code, err = run_cli(["analyze", str(big)], capsys)
    assert code == 2 and "larger than the limit of 16 MiB" in err
    spec = tmp_path / "big.regrapht.toml"
    spec.write_bytes(b"#" * (MAX_SPEC_BYTES + 1))
    code, err = run_cli(["spec", "check", str(spec)], capsys)
    assert code == 2 and "spec is larger than the limit of 1 MiB" in err


def test_helper_reads_at_most_limit_plus_one(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abcdef")
    assert read_bytes_bounded(path, 6) == b"abcdef"
    with pytest.raises(InputError) as info:
        read_bytes_bounded(path, 5, "thing")
    assert info.value.file == str(path) and "thing is larger than the limit of 5 bytes" in info.value.message
    path.write_bytes(b"ok\nok\n\xff\n")
    with pytest.raises(InputError) as info:
        read_text_bounded(path, 100, "spec")
    assert info.value.line == 3 and "not UTF-8" in info.value.message
    with pytest.raises(InputError) as info:
        read_bytes_bounded(tmp_path / "missing", 100)
    assert "No such file" in info.value.message


def test_real_cli_on_dev_zero_has_no_traceback() -> None:
    """The installed command as a user runs it: bounded memory, exit 2, one line."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "regrapht", "analyze", ZERO], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONFAULTHANDLER": ""})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"regrapht: error: {ZERO}: source file is larger than the limit of 16 MiB; not read"
    assert time.perf_counter() - started < 30


# -- spec infer -o ------------------------------------------------------------------------------

def test_infer_output_into_a_directory(source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["spec", "infer", str(source), "--kernel", "scale", "-o", str(tmp_path)], capsys)
    assert code == 2 and f"{tmp_path}: " in err and "is a directory" in err and err.count("\n") == 1


def test_infer_output_into_a_missing_folder(source: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing" / "x.toml"
    code, err = run_cli(["spec", "infer", str(source), "--kernel", "scale", "-o", str(target)], capsys)
    assert code == 2 and f"{target}: " in err and "folder" in err and "does not exist" in err
    assert not target.parent.exists()


def test_infer_output_written(source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "scale.regrapht.toml"
    assert main(["spec", "infer", str(source), "--kernel", "scale", "-o", str(target)]) == 0
    assert main(["spec", "check", str(target)]) == 0
    code, err = run_cli(["spec", "infer", str(source), "--kernel", "scale", "-o", str(target)], capsys)
    assert code == 2 and "already exists" in err
