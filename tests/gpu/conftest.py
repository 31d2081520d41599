"""GPU suite fixtures: a real GPU worker and nvcc, or a clean skip."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# pytest runs with --import-mode=importlib, which does not put test folders on sys.path; the LSP
# tests import their raw client (lsp_client.py) by name.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from regrapht.validate.compiler import CompileCache, Compiler, find_demangler, find_nvcc
from regrapht.validate.worker import GpuWorker


@pytest.fixture(scope="session")
def gpu_worker() -> Iterator[GpuWorker]:
    if importlib.util.find_spec("pycuda") is None:
        pytest.skip("pycuda is not installed")
    worker = GpuWorker(env=os.environ)
    if worker.info().get("device") is None:
        worker.close()
        pytest.skip(f"no CUDA device: {worker.info().get('reason')}")
    yield worker
    worker.close()


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("regrapht-cache")


@pytest.fixture(scope="session")
def compiler(cache_dir: Path) -> Compiler:
    nvcc = find_nvcc(os.environ)
    if nvcc is None or shutil.which(str(nvcc)) is None:
        pytest.skip("nvcc not found")
    return Compiler(nvcc, cache=CompileCache(cache_dir), demangler=find_demangler(nvcc, os.environ))
