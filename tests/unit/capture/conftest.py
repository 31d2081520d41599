"""Fixtures of the capture tests: the injection library built for real, and a fake CUDA.

`fake_cuda` builds tests/support/fake_cuda/ (a libcuda.so.1 whose "device" memory is host
memory, a libcupti.so that calls the subscriber around launches, and a program that loads
CUDA_INJECTION64_PATH as the driver does and launches four kernels): the real library runs on
the CPU against them. Both need g++ and the CUDA toolkit's headers (cuda.h, cupti.h), else skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from regrapht.capture.build import CaptureSetupError, ensure_library, find_toolkit

FAKE = Path(__file__).resolve().parents[2] / "support" / "fake_cuda"


def _toolkit_or_skip() -> tuple[Path, ...]:
    if shutil.which("g++") is None:
        pytest.skip("g++ not on PATH")
    toolkit = find_toolkit(os.environ)
    if not toolkit.include_dirs:
        pytest.skip("cuda.h and cupti.h not found (no CUDA toolkit)")
    return toolkit.include_dirs


@pytest.fixture(scope="session")
def capture_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _toolkit_or_skip()
    env = {k: v for k, v in os.environ.items() if k != "REGRAPHT_CAPTURE_LIBRARY"}
    try:
        return ensure_library(env, tmp_path_factory.mktemp("capture-cache"))
    except CaptureSetupError as error:
        pytest.fail(str(error))


@dataclass(frozen=True)
class FakeCuda:
    folder: Path  # holds libcuda.so.1 and libcupti.so
    program: Path
    cupti: Path


@pytest.fixture(scope="session")
def fake_cuda(tmp_path_factory: pytest.TempPathFactory) -> FakeCuda:
    includes = [f"-I{d}" for d in _toolkit_or_skip()]
    folder = tmp_path_factory.mktemp("fake-cuda")
    steps = [
        ["g++", "-std=c++17", "-shared", "-fPIC", *includes, str(FAKE / "fake_cuda.cpp"), "-o", str(folder / "libcuda.so.1")],
        ["g++", "-std=c++17", "-shared", "-fPIC", *includes, str(FAKE / "fake_cupti.cpp"), "-o", str(folder / "libcupti.so")],
        ["g++", "-std=c++17", *includes, str(FAKE / "fake_program.cpp"), "-o", str(folder / "fake_program"),
         f"-L{folder}", "-l:libcuda.so.1", "-l:libcupti.so", "-ldl", f"-Wl,-rpath,{folder}"],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
    return FakeCuda(folder, folder / "fake_program", folder / "libcupti.so")
