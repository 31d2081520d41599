"""`regrapht eval` in a subprocess (real nvcc, no GPU here): the report files and keys of the CLI
contract, a progress line per task, and a report written after every task; plus
bench/merge_eval.py, which merges per-task reports of parallel runs into one per strategy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TASKS = [ROOT / "bench" / "tasks" / "vector_add", ROOT / "bench" / "tasks" / "scale_bias"]


def run_eval(tmp_path: Path, out: Path, *tasks: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_DATA_HOME": str(tmp_path / "data")}
    return subprocess.run(
        [sys.executable, "-m", "regrapht", "eval", *map(str, tasks), "--strategy", "rules", "--budget", "2",
         "--out", str(out)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=600, check=False,
    )


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH")
def test_eval_writes_the_contract_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_eval(tmp_path, out, *TASKS)
    assert result.returncode == 0, result.stderr
    assert (out / "report.md").is_file() and (out / "speedups.svg").read_text().startswith("<svg")
    report = json.loads((out / "report.json").read_text())
    assert [(t["task"], t["kernel"]) for t in report["tasks"]] == [("vector_add", "vector_add"),
                                                                   ("scale_bias", "scale_bias")]
    for task in report["tasks"]:
        assert {"baseline", "best", "candidates", "tokens", "wall_s", "reason", "recheck"} <= task.keys()
        assert task["best"] is None and "no CUDA device" in task["reason"]
    totals = report["totals"]
    assert {"tasks", "verified_correct", "improved", "slower", "geomean_speedup"} <= totals.keys()
    assert (totals["tasks"], totals["verified_correct"], totals["improved"], totals["slower"]) == (2, 0, 0, 0)
    progress = [line for line in result.stderr.splitlines() if line.startswith(("vector_add/", "scale_bias/"))]
    assert [line.split(":")[0] for line in progress] == ["vector_add/vector_add", "scale_bias/scale_bias"]


def test_merge_eval_combines_per_task_reports(tmp_path: Path) -> None:
    runs, merged = tmp_path / "runs", tmp_path / "merged"
    rows = {
        "vector_add": {"task": "vector_add", "kernel": "vector_add", "gpu": "NVIDIA H200",
                       "best": {"speedup": 4.0, "time_ms": 0.1, "techniques": ["vectorized_access"]},
                       "recheck": {"outcome": "faster", "speedup": 3.9}, "roofline": {"fraction": 0.9}},
        "sgemm": {"task": "sgemm", "kernel": "sgemm", "gpu": "NVIDIA H200", "best": None,
                  "recheck": {"outcome": None}, "roofline": {"fraction": 0.1}},
    }
    for name, row in rows.items():
        folder = runs / f"eval-mcgs-{name}"
        folder.mkdir(parents=True)
        (folder / "report.json").write_text(json.dumps(
            {"strategy": "mcgs", "budget": 12, "seed": 0, "gpu": "NVIDIA H200", "model": "m.gguf",
             "model_device": "cpu", "tasks": [row]}))
    result = subprocess.run([sys.executable, str(ROOT / "bench" / "merge_eval.py"), str(runs), str(merged)],
                            capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    report = json.loads((merged / "mcgs" / "report.json").read_text())
    assert [t["task"] for t in report["tasks"]] == ["sgemm", "vector_add"]
    assert report["totals"]["verified_correct"] == 1 and report["totals"]["geomean_speedup"] == pytest.approx(2.0)
    assert report["totals"]["geomean_roofline_fraction"] == pytest.approx(0.3)
    assert "| mcgs | 2 | 1 | 1 | 0 | 2.00x | 0.30 |" in (merged / "summary.md").read_text()


def test_merge_eval_tabulates_optimize_results_of_the_examples(tmp_path: Path) -> None:
    runs, merged = tmp_path / "runs", tmp_path / "merged"
    runs.mkdir()
    faster = {"best": {"speedup": 3.25, "time_ms": 0.1, "verified": True, "techniques": ["grid_stride_loop"]},
              "wall_s": 12.4, "reason": None}
    (runs / "optimize-mcgs-saxpy-saxpy.json").write_text(json.dumps(faster))
    (runs / "optimize-cot-saxpy-saxpy.json").write_text(json.dumps({"best": None, "wall_s": 9.0,
                                                                     "reason": "no candidate passed the check"}))
    (runs / "optimize-random-transpose-transpose_tiled.json").write_text("")  # killed before writing
    result = subprocess.run([sys.executable, str(ROOT / "bench" / "merge_eval.py"), str(runs), str(merged)],
                            capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    lines = (merged / "summary.md").read_text().splitlines()
    assert lines[0] == "| example kernel | mcgs | random | cot |"
    assert lines[2] == "| saxpy-saxpy | 3.25x (grid_stride_loop; 12 s) | not run | none: no candidate passed the check |"
    assert lines[3].startswith("| transpose-transpose_tiled | not run | no result (killed")
