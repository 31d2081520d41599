"""`regrapht optimize` end to end in a subprocess: compile-only on a machine without a GPU (real
nvcc: `best` null with a reason), with networking blocked to prove nothing tries to connect; and
with the real SmolLM2 model (mcgs, tiny budget)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

GUARD = '''
import os, socket

_LOG = os.environ["REGRAPHT_SOCKET_LOG"]


def _refuse(what):
    with open(_LOG, "a") as log:
        log.write(what + "\\n")
    raise OSError("network access blocked by the test")


_real_socket = socket.socket


class _GuardedSocket(_real_socket):
    def __init__(self, family=-1, type=-1, proto=-1, fileno=None):
        if family in (socket.AF_INET, socket.AF_INET6):
            _refuse(f"socket({family})")
        super().__init__(family, type, proto, fileno)

    def connect(self, address):
        _refuse(f"connect({address!r})")

    def connect_ex(self, address):
        _refuse(f"connect_ex({address!r})")


socket.socket = _GuardedSocket
socket.create_connection = lambda *a, **k: _refuse(f"create_connection{a!r}")
'''


def run_optimize(tmp_path: Path, *args: str, guard: bool = True, timeout: float = 600) -> tuple[subprocess.CompletedProcess[str], Path]:
    env = dict(os.environ)
    log = tmp_path / "sockets.log"
    log.write_text("")
    if guard:
        site = tmp_path / "guard"
        site.mkdir(exist_ok=True)
        (site / "sitecustomize.py").write_text(GUARD)
        # sitecustomize runs in every Python process started with this PYTHONPATH: the CLI
        # and the GPU worker it spawns.
        env["PYTHONPATH"] = str(site) + os.pathsep + str(ROOT / "server") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env["REGRAPHT_SOCKET_LOG"] = str(log)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    done = subprocess.run([sys.executable, "-m", "regrapht", "optimize", *args, "--json"], capture_output=True,
                          text=True, env=env, timeout=timeout, check=False)
    return done, log


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")


def has_device() -> bool:
    return shutil.which("nvidia-smi") is not None and subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                                                                       check=False).returncode == 0


@pytest.mark.nvcc
@needs_nvcc
def test_rules_compile_only_without_a_gpu_and_without_network(tmp_path: Path) -> None:
    if has_device():
        pytest.skip("this test is about a machine without a CUDA device")
    done, log = run_optimize(tmp_path, str(ROOT / "examples/reduce_sum.cu"), "--kernel", "reduce_sum",
                             "--strategy", "rules", "--budget", "6")
    assert done.returncode == 1, done.stderr  # ran, but nothing verified: exit 1 (see docs/search.md)
    data = json.loads(done.stdout)
    assert data["best"] is None and "no CUDA device" in data["reason"]
    assert data["candidates"]["generated"] == 6 and data["candidates"]["compiled"] == 6
    assert data["strategy"] == "rules" and data["arch"] == "sm_90"
    # every candidate judged, in order, with its technique path and verdict (compiled, no device)
    judged = data["judged"]
    assert [c["index"] for c in judged] == list(range(1, 7))
    assert all(c["techniques"] and c["outcome"] == "unverified" and c["compile_s"] is not None for c in judged), judged
    assert log.read_text() == "", log.read_text()


@pytest.mark.nvcc
@needs_nvcc
def test_a_kernel_declared_with_launch_bounds_before_its_name_is_rewritten_within_them(tmp_path: Path) -> None:
    """`__global__ void __launch_bounds__(256) reduce_sum(...)`: the CLI finds the kernel (not one
    named `__launch_bounds__`), the appliers rewrite it, every candidate compiles with the real
    nvcc, and no rewrite launches more threads than the bound (the grids stop at 256)."""
    if has_device():
        pytest.skip("this test is about a machine without a CUDA device")
    from regrapht.app.optimize import kernel_target
    from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, rewrites_of
    from regrapht.spec.model import load_spec

    original = (ROOT / "examples/reduce_sum.cu").read_text()
    source = original.replace("__global__ void reduce_sum(", "__global__ void __launch_bounds__(256) reduce_sum(")
    assert source != original
    cu = tmp_path / "bounded.cu"
    cu.write_text(source)
    spec_path = tmp_path / "bounded.regrapht.toml"
    spec_path.write_text((ROOT / "examples/reduce_sum.regrapht.toml").read_text())
    done, log = run_optimize(tmp_path, str(cu), "--kernel", "reduce_sum", "--strategy", "rules", "--budget", "8")
    assert done.returncode == 1, done.stderr  # found and searched; nothing verified without a GPU
    data = json.loads(done.stdout)
    assert data["best"] is None and "no CUDA device" in data["reason"]
    assert data["candidates"]["generated"] == 8 and data["candidates"]["compiled"] == 8
    assert log.read_text() == "", log.read_text()
    # what the sweep drew from: every applier's rewrites of this file on an H200's limits
    [kernel] = load_spec(spec_path).kernels
    target = kernel_target(kernel)
    given = ApplierInput(source, kernel.name, target.launch, target.constants, DeviceLimits(132, 2048, 1024, 48 * 1024))
    rewrites = {type(a).__name__: rewrites_of(a, given) for a in APPLIERS}
    assert len(rewrites["BlockReduceAtomic"]) > 4  # its hand-picked variants and grid points
    every = [r for found in rewrites.values() for r in found]
    assert every and all(int(r.launch.block[0]) <= 256 for r in every)
    assert all("__launch_bounds__(256) reduce_sum(" in r.source for r in every)


def test_bad_kernel_is_exit_2(tmp_path: Path) -> None:
    done, _ = run_optimize(tmp_path, str(ROOT / "examples/saxpy.cu"), "--kernel", "nope", "--strategy", "rules",
                           guard=False)
    assert done.returncode == 2 and "nope" in done.stderr


def model_available() -> bool:
    from regrapht.model.locate import embedded_model_path

    return bool(os.environ.get("REGRAPHT_MODEL")) or embedded_model_path() is not None


@pytest.mark.model
@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.skipif(not model_available(), reason="no SmolLM2 GGUF")
def test_mcgs_with_the_real_model_compile_only_and_offline(tmp_path: Path) -> None:
    done, log = run_optimize(tmp_path, str(ROOT / "examples/saxpy.cu"), "--kernel", "saxpy", "--strategy", "mcgs",
                             "--budget", "3", "--seed", "1")
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout)
    # saxpy has more applier rewrites than the budget: the loaded model waits behind them
    assert data["tokens"] == {"prompt": 0, "completion": 0} and data["model_calls"] == {}
    assert data["model_device"] == "cpu" and data["model"].endswith(".gguf")
    assert data["candidates"]["generated"] == 3
    if not has_device():
        assert data["best"] is None
    assert log.read_text() == "", log.read_text()
