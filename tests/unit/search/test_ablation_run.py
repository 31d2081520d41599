"""bench/ablation.py end to end without a GPU (candidates compiled with real nvcc, "unverified"):
one process runs every configuration and seed of a task on one evaluator and one measurement
cache, so a candidate found by a second configuration or seed is reused, not compiled again;
and bench/gpu/run_ablation.sh's dry-run path (no CUDA device) runs and prints the table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TASK = ROOT / "bench/corpus/train/axpby_int"

pytestmark = [pytest.mark.nvcc, pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")]


def test_every_configuration_and_seed_of_a_task_share_the_measurements(tmp_path: Path) -> None:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, "bench/ablation.py", str(TASK), "--out", str(tmp_path / "rows"),
                           "--configs", "rules:4", "mcgs:4:no-model", "--seeds", "0", "1"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {p.name: json.loads(p.read_text()) for p in (tmp_path / "rows").glob("*-axpby_int-*.json")}
    assert sorted(rows) == sorted(f"{c}-s{s}-axpby_int-axpby_int.json" for c in ("rules-b4", "mcgs-nomodel-b4")
                                  for s in (0, 1))
    assert rows["rules-b4-s1-axpby_int-axpby_int.json"]["copied_from_seed"] == 0
    mcgs = [rows[f"mcgs-nomodel-b4-s{s}-axpby_int-axpby_int.json"]["measurements"] for s in (0, 1)]
    # mcgs's first candidates are among the rules sweep's: reused, as is all of seed 1 that seed 0 judged
    assert mcgs[0]["reused"] >= 1 and mcgs[1]["reused"] >= 1
    cache = json.loads((tmp_path / "rows/cache-axpby_int.json").read_text())
    assert cache["search"]["hits"] == sum(m["reused"] for m in mcgs) and "shared measurements" in cache["method"]
    # every stored verdict, by digest, for bench/replay_ablation.py
    assert len(cache["entries"]) == cache["search"]["stored"] and all(len(e["digest"]) == 64 for e in cache["entries"])
    table = subprocess.run([sys.executable, "bench/merge_ablation.py", str(tmp_path / "rows")], cwd=ROOT,
                           capture_output=True, text=True, timeout=60, check=False)
    assert table.returncode == 0 and "verdicts reused" in table.stdout, table.stdout + table.stderr


def test_run_ablation_sh_dry_run_without_a_gpu(tmp_path: Path) -> None:
    """bench/gpu/run_ablation.sh on a machine without a CUDA device: one job per task, every
    configuration and seed, the table with the method and what was reused."""
    if shutil.which("nvidia-smi") is not None:
        pytest.skip("a machine with nvidia-smi runs the real thing")
    env = dict(os.environ, OUT=str(tmp_path / "out"), TASKS=str(TASK), SEEDS="0 1", NO_MODEL="1", JOBS="1",
               SUITE_TIMEOUT="300", RUN_DIR=str(tmp_path / "run"), XDG_CACHE_HOME=str(tmp_path / "cache"),
               PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    done = subprocess.run(["bash", "bench/gpu/run_ablation.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "no CUDA device: dry run" in done.stdout and "verdicts reused" in done.stdout
    assert "axpby_int exit=0" in (tmp_path / "out/status.txt").read_text()
    table = (tmp_path / "out/ablation.md").read_text()
    assert "| mcgs-nomodel-b12 | mcgs | 12 | no |" in table and "| rules-b24 | rules | 24 | - |" in table
