"""Compile-only check of rewritten sources with the real nvcc (tests marked `nvcc`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")


def compile_ok(source: str, where: Path, name: str = "k") -> None:
    path = where / f"{name}.cu"
    path.write_text(source)
    done = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-Xptxas", "--warn-on-spills,--warning-as-error",
                           "-o", str(where / f"{name}.cubin"), str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{source}\n{done.stderr}"
