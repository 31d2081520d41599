"""`regrapht capture` and `--capture DIR` on the command line, in a subprocess, without a GPU:
clear one-line errors (no program, a bad filter, no CUDA driver, another injection tool, a folder
that is not a capture, --spec with --capture) and, with nvcc, `bench --capture` compiling the
kernel of the hand-made capture with the spec the capture wrote."""

from __future__ import annotations

import ctypes.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from regrapht.capture.run import CaptureOptions, finish, prepare_out
from regrapht.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
HANDMADE = ROOT / "tests" / "data" / "capture" / "handmade"


def regrapht(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), **(env or {})}
    base.pop("REGRAPHT_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-m", "regrapht", *args], capture_output=True, text=True, env=base,
                          cwd=tmp_path, timeout=600, check=False)


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr
    return lines[-1]


def test_no_program_is_bad_input(tmp_path: Path) -> None:
    done = regrapht(tmp_path, "capture", "--data")
    assert done.returncode == 2
    assert "no program to run: give it after `--`" in one_error_line(done)


def test_a_bad_filter_is_bad_input(tmp_path: Path) -> None:
    done = regrapht(tmp_path, "capture", "--kernel", "blur(", "--", "true")
    assert done.returncode == 2 and "--kernel 'blur(' is not a regular expression" in one_error_line(done)


def test_launches_must_be_positive(tmp_path: Path) -> None:
    done = regrapht(tmp_path, "capture", "--launches", "0", "--", "true")
    assert done.returncode == 2 and "--launches must be at least 1" in one_error_line(done)


def test_another_injection_tool_is_said(tmp_path: Path) -> None:
    done = regrapht(tmp_path, "capture", "--", "true", env={"CUDA_INJECTION64_PATH": "/opt/tool/libinject.so"})
    assert done.returncode == 1
    assert "CUDA_INJECTION64_PATH is already set (/opt/tool/libinject.so)" in one_error_line(done)


@pytest.mark.nvcc
@pytest.mark.skipif(ctypes.util.find_library("cuda") is not None, reason="a CUDA driver is installed here")
@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("nvcc") is None, reason="needs g++ and the toolkit")
def test_without_a_gpu_capture_says_so_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    done = regrapht(tmp_path, "capture", "--out", "cap", "--", "touch", str(marker))
    assert done.returncode == 1
    assert one_error_line(done).startswith("regrapht capture: error: no CUDA driver (libcuda.so.1 cannot be loaded")
    assert not marker.exists()


def test_a_folder_that_is_not_a_capture(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text("__global__ void k(float *x) { x[0] = 1; }\n")
    done = regrapht(tmp_path, "bench", "k.cu", "--kernel", "k", "--capture", "nowhere", "--no-run")
    assert done.returncode == 2
    assert one_error_line(done) == ("regrapht: error: nowhere: not a capture directory (no capture.json; make one "
                                    "with `regrapht capture -- CMD`)")
    done = regrapht(tmp_path, "optimize", "k.cu", "--kernel", "k", "--capture", "nowhere", "--spec", "k.toml")
    assert done.returncode == 2 and "give --spec or --capture, not both" in one_error_line(done)


def test_the_out_folder_must_not_hold_other_files(tmp_path: Path) -> None:
    out = tmp_path / "cap"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="is not empty and holds no earlier capture \\(notes.txt"):
        prepare_out(out)
    assert (out / "notes.txt").read_text() == "mine"
    # an earlier capture is replaced: only the capture's own files and folders go
    (out / "capture.json").write_text("{}")
    (out / "specs").mkdir()
    (out / "specs" / "old.regrapht.toml").write_text("")
    prepare_out(out)
    assert sorted(p.name for p in out.iterdir()) == ["data", "notes.txt"]


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH")
def test_bench_compiles_the_kernel_with_the_captures_spec(tmp_path: Path) -> None:
    capture = tmp_path / "cap"
    shutil.copytree(HANDMADE, capture)
    finish(CaptureOptions(("./app",), capture, data=True, sources=tmp_path / "none"), 0, 0.0)
    (tmp_path / "blur.cu").write_text(
        "template <typename T, int R>\n"
        "__global__ void blur(const T *in, T *out, int width, int height, float s)\n"
        "{\n    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;\n"
        "    if (x < width && y < height) out[y * width + x] = in[y * width + x] * R;\n}\n"
        "template __global__ void blur<float, 3>(const float *, float *, int, int, float);\n")
    done = regrapht(tmp_path, "bench", "blur.cu", "--kernel", "blur<float, 3>", "--capture", "cap", "--no-run",
                    "--json")
    assert done.returncode == 0, done.stderr
    assert '"kernel": "blur<float, 3>"' in done.stdout
    # the positional names of the capture's spec are renamed after blur.cu's declaration
    named = (capture / "specs" / "blur_float_3.named.regrapht.toml").read_text()
    assert 'name = "width"' in named and 'count = "width * height"' in named
    assert "file(captures/L000001-p0.npy)" in named  # data paths are not renamed


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH")
def test_a_kernel_with_a_struct_by_value_is_found_by_its_mangled_name(tmp_path: Path) -> None:
    """levels(float*, int, Levels) of the image pipeline, with the spec capture writes for it."""
    (tmp_path / "levels.regrapht.toml").write_text(
        '[[kernel]]\nname = "levels"\ngrid = [65536]\nblock = [256]\n\n'
        '[[kernel.arg]]\nname = "image"\ntype = "float*"\ncount = "n"\ninit = "uniform(0, 255)"\nrole = "inout"\n\n'
        '[[kernel.arg]]\nname = "n"\ntype = "int"\nvalue = "16777216"\n\n'
        '[[kernel.arg]]\nname = "adjust"\ntype = "struct Levels"\nbytes = "000000410000a03f"\nalign = 4\n')
    source = ROOT / "tests" / "data" / "capture" / "programs" / "image_pipeline" / "image_pipeline.cu"
    done = regrapht(tmp_path, "bench", str(source), "--kernel", "levels", "--spec", "levels.regrapht.toml",
                    "--no-run", "--json")
    assert done.returncode == 0, done.stderr
    assert '"kernel": "levels"' in done.stdout
