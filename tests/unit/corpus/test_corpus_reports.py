"""The corpus's evaluation plumbing: task families in `regrapht eval` reports (per-family totals and
table), bench/verify_appliers.py (every applier's rewrites checked; here, with nvcc but no GPU,
compiled and reported unverified) and bench/gpu/run_corpus.sh run end to end without a device."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from regrapht.errors import InputError
from regrapht.evaluation.report import markdown, totals
from regrapht.evaluation.runner import load_task

ROOT = Path(__file__).resolve().parents[3]
TASK = ROOT / "bench" / "corpus" / "test" / "gelu_tanh"
without_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH")


def row(task: str, family: str | None, speedup: float | None, fraction: float | None,
        outcome: str | None = "faster") -> dict[str, object]:
    best = None if speedup is None else {"speedup": speedup, "time_ms": 1.0, "techniques": ["x"]}
    entry: dict[str, object] = {"task": task, "kernel": task, "best": best,
                                "recheck": {"outcome": outcome if best else None, "speedup": speedup},
                                "roofline": {"fraction": fraction}}
    if family is not None:
        entry["family"] = family
    return entry


def test_totals_have_one_entry_per_family_and_count_unconfirmed_answers() -> None:
    rows = [row("a", "scan", 4.0, 0.2), row("b", "scan", 16.0, 0.8), row("c", "gemm", 2.0, 0.5),
            row("d", "gemm", 3.0, 0.6, outcome="wrong"), row("e", None, None, 0.1)]
    result = totals(rows)
    assert result["tasks"] == 5 and result["verified_correct"] == 3 and result["wrong"] == 1
    families = result["families"]
    assert isinstance(families, dict) and list(families) == ["gemm", "scan"]
    assert families["scan"]["geomean_speedup"] == pytest.approx(8.0)
    assert families["scan"]["geomean_roofline_fraction"] == pytest.approx(0.4)
    assert families["scan"]["min_roofline_fraction"] == pytest.approx(0.2)
    assert families["gemm"]["wrong"] == 1 and families["gemm"]["verified_correct"] == 1
    assert result["min_family_roofline_fraction"] == pytest.approx(0.4)
    text = markdown({"strategy": "mcgs", "budget": 12, "tasks": rows, "totals": result})
    assert "| scan | 2 | 2 | 2 | 0 | 0 | 8x | 40% | 20% |" in text
    assert "| c | gemm | c |" in text and "- families:" not in text


def test_a_report_without_families_has_no_family_table() -> None:
    result = totals([row("a", None, 2.0, 0.5)])
    assert result["families"] == {} and result["min_family_roofline_fraction"] is None
    assert "Per family" not in markdown({"tasks": [row("a", None, 2.0, 0.5)], "totals": result})


def test_the_family_comes_from_task_json_and_a_bad_one_names_the_file(tmp_path: Path) -> None:
    assert load_task(TASK).family == "elementwise"
    copy = tmp_path / "gelu"
    shutil.copytree(TASK, copy)
    (copy / "task.json").write_text(json.dumps({"family": 3}))
    with pytest.raises(InputError) as caught:
        load_task(copy)
    assert caught.value.file == str(copy / "task.json") and caught.value.key == "family"


def test_verify_appliers_tabulates_failed_rewrites_with_their_reason(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import verify_appliers
    finally:
        sys.path.remove(str(ROOT / "bench"))
    entries = [{"task": "t", "split": "test", "family": "scan", "kernel": "k", "gpu": "H200", "baseline_ms": 2.0,
                "baseline_fraction": 0.01, "rewrites": [
                    {"applier": "LoopUnrolling", "technique": "loop_unrolling", "note": "unroll 4", "outcome": "faster",
                     "speedup": 1.5, "roofline_fraction": 0.015, "reason": ""},
                    {"applier": "GridStrideLoop", "technique": "grid_stride_loop", "note": "grid", "outcome": "wrong",
                     "speedup": None, "reason": "out[3]: 1 != 2"}]}]
    text = verify_appliers.markdown(entries)
    assert "| GridStrideLoop | 1 | 1 | 0 | 0 | 1 |" in text
    assert "| test | scan | t | 2 | 1% | GridStrideLoop, LoopUnrolling | LoopUnrolling: unroll 4 | 1.5x | 2% |" in text
    assert "| test/t | GridStrideLoop | grid | wrong | out[3]: 1 != 2 |" in text


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_DATA_HOME": str(tmp_path / "data"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.mark.nvcc
@without_nvcc
def test_verify_appliers_runs_every_applier_without_a_gpu(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "bench/verify_appliers.py", "run", str(TASK), "--out", str(out)],
                            capture_output=True, text=True, cwd=ROOT, env=_env(tmp_path), timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    [entry] = json.loads((out / "test-gelu_tanh.json").read_text())
    assert entry["family"] == "elementwise" and entry["gpu"] is None and "no CUDA device" in entry["no_device"]
    assert entry["rewrites"] and {r["outcome"] for r in entry["rewrites"]} == {"unverified"}
    assert entry["bytes"] == 2 * 4 * (1 << 24)


@pytest.mark.nvcc
@without_nvcc
def test_run_corpus_script_runs_end_to_end_and_says_there_is_no_device(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {**_env(tmp_path), "OUT": str(out), "MODE": "both", "STRATEGY": "rules", "BUDGET": "2", "JOBS": "2",
           "TASKS": f"{TASK} {ROOT / 'bench' / 'corpus' / 'train' / 'axpby_int'}", "RUN_DIR": str(tmp_path / "run")}
    result = subprocess.run(["bash", "bench/gpu/run_corpus.sh"], capture_output=True, text=True, cwd=ROOT, env=env,
                            timeout=900, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no CUDA device" in (out / "gpu.txt").read_text()
    report = json.loads((out / "corpus-test-rules-b2" / "report.json").read_text())
    assert sorted(t["task"] for t in report["tasks"]) == ["axpby_int", "gelu_tanh"]
    assert set(report["totals"]["families"]) == {"elementwise"}
    assert all("no CUDA device" in t["reason"] for t in report["tasks"])
    assert (out / "corpus-test-rules-b2" / "not_run.md").read_text() == ""
    assert {p.name for p in (out / "appliers").glob("*.json")} == {
        "appliers.json", "test-gelu_tanh.json", "train-axpby_int.json"}
    assert "Per applier" in (out / "appliers" / "appliers.md").read_text()
    assert (out / "corpus-logs.tgz").is_file()
